"""SCM's metrics (scm/server/metrics.py) over the real core: the simulator drives heartbeats, block
writes and a dead datanode's repair on virtual time, and every scrape is parsed as Prometheus text. The
daemon test checks the wiring: the heartbeat histogram observed by the gRPC service, /prom and /jmx."""

from __future__ import annotations

from collections import Counter

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from pyozone.common.web.metrics import MetricsSystem, snake
from pyozone.config import OzoneConfiguration
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.replication_report import REPORT_HEALTH_STATES
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, PipelineState
from pyozone.scm.events import SCMEvent
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.server.metrics import register_scm_metrics
from pyozone.sim.cluster import SimCluster
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    async_test,
    channel,
    running_scm,
    scm_conf,
)

SECOND = 1_000
MINUTE = 60 * SECOND
FAST = {
    "hdds.heartbeat.interval": "3s",
    "ozone.scm.stale.node.interval": "30s",
    "ozone.scm.dead.node.interval": "60s",
    "hdds.scm.wait.time.after.safemode.exit": "5s",
    "hdds.scm.replication.thread.interval": "10s",
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
    "ozone.scm.close.container.wait.duration": "5s",
}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(metrics: MetricsSystem) -> Samples:
    """Every sample of /prom's text, as prometheus_client's parser reads it."""
    text = metrics.prometheus_text().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name, frozenset(labels.items())]


def sim(datanodes: int = 4) -> tuple[SimCluster, MetricsSystem]:
    c = SimCluster(datanodes, conf=OzoneConfiguration(FAST), seed=5)
    metrics = MetricsSystem("StorageContainerManager", process=False)
    register_scm_metrics(metrics, c.scm)
    return c, metrics


def ready(c: SimCluster) -> None:
    """Out of safe mode, the Replication Manager may run, every RATIS/THREE pipeline the limit allows open."""
    assert c.run_until(c.scm.replication.should_run, 5 * MINUTE)
    assert c.run_until(lambda: len(c.scm.pipelines.open_pipelines(RATIS_THREE)) >= 2, 5 * MINUTE)


def test_safe_mode_then_heartbeats_nodes_and_the_commands_each_response_carried() -> None:
    c, metrics = sim()
    start = scrape(metrics)
    assert value(start, "safe_mode_metrics_scm_in_safe_mode") == 1
    assert value(start, "safe_mode_metrics_pre_check_passed") == 0
    rule = {"rule": "DataNodeSafeModeRule", "pre_check": "true"}
    assert value(start, "safe_mode_metrics_rule_validated", **rule) == 0
    assert value(start, "scm_node_metrics_num_hb_processed_total") == 0

    handed: Counter[tuple[str, str]] = Counter()  # what the core's heartbeat returned, per (type, datanode)
    heartbeat = c.scm.heartbeat

    def counting(hb: Heartbeat) -> list:
        commands = heartbeat(hb)
        handed.update((command.type.name, hb.datanode.uuid) for command in commands)
        return commands

    c.scm.heartbeat = counting  # type: ignore[method-assign]
    ready(c)
    c.advance(2 * MINUTE)  # past a node report interval (1 min)
    s = scrape(metrics)
    assert value(s, "safe_mode_metrics_scm_in_safe_mode") == 0
    assert value(s, "safe_mode_metrics_pre_check_passed") == 1
    assert value(s, "safe_mode_metrics_rule_validated", **rule) == 1
    assert all(r.validated for r in c.scm.safe_mode.rule_statuses())
    # the first contact of each datanode registers it; every later one is a heartbeat
    assert value(s, "scm_node_metrics_num_hb_processed_total") == c.heartbeats_delivered - 4
    assert value(s, "scm_node_metrics_num_hb_processing_failed_total") == 0
    assert value(s, "scm_node_metrics_num_node_report_processed_total") > 0
    for health in NodeState:
        for op in NodeOperationalState:
            n = 4 if (health, op) == (NodeState.HEALTHY, NodeOperationalState.IN_SERVICE) else 0
            labels = {"health": health.name, "operational_state": op.name}
            assert value(s, "scm_node_metrics_nodes", **labels) == n
    nodes = c.scm.nodes.nodes()
    assert value(s, "scm_node_metrics_disk_capacity") == sum(i.capacity() for i in nodes) > 0
    assert value(s, "scm_node_metrics_disk_remaining") == sum(i.remaining() for i in nodes)
    sent = {
        (dict(labels)["type"], dict(labels)["datanode"]): v
        for (name, labels), v in s.items()
        if name == "scm_commands_sent_total"
    }
    assert sent == handed and {dn for _, dn in sent} == set(c.datanodes), sent
    assert all(sent["createPipelineCommand", dn] >= 1 for dn in c.datanodes)


def test_a_heartbeat_from_an_unknown_datanode_fails_and_is_told_to_register() -> None:
    c, metrics = sim()
    stranger = DatanodeDetails("0badc0de-0000-4000-8000-000000000000", "nobody", "10.9.9.9")
    commands = c.scm.heartbeat(Heartbeat(stranger))
    s = scrape(metrics)
    assert [command.type.name for command in commands] == ["reregisterCommand"]
    assert value(s, "scm_node_metrics_num_hb_processing_failed_total") == 1
    assert value(s, "scm_commands_sent_total", type="reregisterCommand", datanode=stranger.uuid) == 1


def test_block_allocations_containers_and_pipelines_by_state() -> None:
    c, metrics = sim()
    ready(c)
    assert not any(name == "scm_pipeline_metrics_num_blocks_allocated_total" for name, _ in scrape(metrics))
    for _ in range(25):
        c.write_block(1 << 20)
    c.advance(10 * SECOND)
    s = scrape(metrics)
    blocks = value(s, "scm_pipeline_metrics_num_blocks_allocated_total", replication="RATIS/THREE")
    assert blocks == 25
    containers = c.scm.containers
    assert containers.count(LifeCycleState.OPEN) > 0 and containers.count(LifeCycleState.CLOSED) > 0
    for state in LifeCycleState:
        metric = "scm_container_metrics_" + state.name.lower() + "_containers"
        assert value(s, metric) == containers.count(state), state
    assert value(s, "scm_container_metrics_total_containers") == containers.count()
    for config in (RATIS_THREE, c.scm.pipelines.pipelines()[0].replication_config):
        for state in PipelineState:
            labels = {"state": state.name, "replication_type": config.type.name, "replication": str(config)}
            assert s.get(("scm_pipelines", frozenset(labels.items())), 0) == len(
                c.scm.pipelines.pipelines(config, state)
            ), labels


def test_a_dead_datanode_and_the_replication_managers_repair() -> None:
    c, metrics = sim()
    ready(c)
    for _ in range(30):
        c.write_block(1 << 20)
    for container in c.scm.containers.containers(LifeCycleState.OPEN):
        c.scm.events.fire(SCMEvent.CLOSE_CONTAINER, container.container_id)
    closed = c.scm.containers
    assert c.run_until(
        lambda: closed.count(LifeCycleState.CLOSED) >= 3 and not closed.count(LifeCycleState.OPEN), MINUTE
    )
    holders = Counter(r.datanode for info in closed.containers() for r in closed.replicas(info.container_id))
    victim = holders.most_common(1)[0][0]
    before = scrape(metrics)
    assert value(before, "replication_manager_metrics_replication_cmds_sent_total") == 0

    c.kill(victim)
    rm = c.scm.replication
    under_seen = inflight_seen = False

    def repaired() -> bool:
        nonlocal under_seen, inflight_seen
        s = scrape(metrics)
        pending = rm.pending_ops.count
        assert value(s, "replication_manager_metrics_inflight_replication") == pending(
            PendingOpType.ADD, False
        )
        assert value(s, "replication_manager_metrics_inflight_deletion") == pending(
            PendingOpType.DELETE, False
        )
        for health in REPORT_HEALTH_STATES:
            name = "replication_manager_metrics_" + snake(health.metric_name)
            assert value(s, name) == rm.report.stat(health), health
        under_seen |= value(s, "replication_manager_metrics_under_replicated_containers") > 0
        inflight_seen |= value(s, "replication_manager_metrics_inflight_replication") > 0
        return value(s, "replication_manager_metrics_replicas_created_total") >= holders[victim]

    assert c.run_until(repaired, 5 * MINUTE, step_ms=SECOND)
    s = scrape(metrics)
    dead = {"health": "DEAD", "operational_state": "IN_SERVICE"}
    assert value(s, "scm_node_metrics_nodes", **dead) == 1
    assert value(s, "replication_manager_metrics_replication_cmds_sent_total") >= holders[victim]
    replications = {
        dict(labels)["datanode"]: v
        for (name, labels), v in s.items()
        if name == "scm_commands_sent_total" and ("type", "replicateContainerCommand") in labels
    }
    assert victim not in replications and sum(replications.values()) >= holders[victim], replications
    assert under_seen and inflight_seen
    for field in ReplicationManagerMetrics.__dataclass_fields__:  # every counter is exported, as kept
        assert value(s, f"replication_manager_metrics_{field}") == getattr(rm.metrics, field), field


@async_test
async def test_the_daemon_serves_heartbeat_latency_on_prom_and_rm_metrics_on_jmx(tmp_path) -> None:
    async with running_scm(scm_conf(tmp_path)) as daemon, channel(daemon.datanode_port) as ch:
        dn = FakeDatanode(1, ch)
        await dn.register()
        for _ in range(3):
            await dn.heartbeat()
        async with aiohttp.ClientSession() as http:
            base = f"http://127.0.0.1:{daemon.http_port}"
            async with http.get(f"{base}/prom") as answer:
                assert answer.status == 200
                s = {
                    (x.name, frozenset(x.labels.items())): x.value
                    for family in text_string_to_metric_families(await answer.text())
                    for x in family.samples
                }
            bean = "Hadoop:service=StorageContainerManager,name=ReplicationManagerMetrics"
            async with http.get(f"{base}/jmx", params={"qry": bean}) as answer:
                beans = (await answer.json())["beans"]
    assert value(s, "scm_heartbeat_seconds_count") == 3 == value(s, "scm_node_metrics_num_hb_processed_total")
    assert 0 < value(s, "scm_heartbeat_seconds_sum") < 3
    assert value(s, "scm_node_metrics_nodes", health="HEALTHY", operational_state="IN_SERVICE") == 1
    assert value(s, "safe_mode_metrics_scm_in_safe_mode") == 1  # one datanode of the three it waits for
    assert [b["name"] for b in beans] == [bean]
    assert beans[0]["replication_manager_metrics_replication_cmds_sent_total"] == 0
    assert beans[0]["replication_manager_metrics_under_replicated_containers"] == 0
