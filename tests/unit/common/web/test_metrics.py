"""MetricsSystem: Hadoop sink names, Prometheus text that parses, JMX beans per source."""

from __future__ import annotations

import json

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from pyozone.common.web.metrics import MetricsSystem, prometheus_name, snake


def test_names_follow_hadoops_prometheus_sink() -> None:
    assert snake("NumHBProcessed") == "num_hb_processed"
    assert snake("SCMNodeMetrics") == "scm_node_metrics"
    assert prometheus_name("OMMetrics", "NumKeyAllocate") == "om_metrics_num_key_allocate"
    assert prometheus_name("ReplicationManagerMetrics", "InflightReplication") == (
        "replication_manager_metrics_inflight_replication"
    )


class _State:
    """A collector reading state at scrape time, as the daemons count things by state."""

    def __init__(self) -> None:
        self.open = 3

    def collect(self):
        family = GaugeMetricFamily("scm_containers", "containers by state", labels=["state"])
        family.add_metric(["OPEN"], self.open)
        yield family


def test_every_source_is_in_the_prometheus_text_and_it_parses() -> None:
    metrics = MetricsSystem("StorageContainerManager")
    hb = Counter(
        prometheus_name("SCMNodeMetrics", "NumHBProcessed"),
        "heartbeats",
        registry=metrics.source("SCMNodeMetrics"),
    )
    hb.inc(2)
    latency = Histogram("scm_heartbeat_seconds", "latency", registry=metrics.source("SCMNodeMetrics"))
    latency.observe(0.003)
    state = _State()
    metrics.add_collector("ContainerManagerMetrics", state)
    state.open = 5  # read when scraped, not when registered
    families = {f.name: f for f in text_string_to_metric_families(metrics.prometheus_text().decode())}
    assert families["scm_node_metrics_num_hb_processed"].samples[0].value == 2
    assert families["scm_node_metrics_num_hb_processed"].samples[0].name.endswith("_total")
    assert families["scm_containers"].samples[0].value == 5
    assert any(
        s.name == "scm_heartbeat_seconds_count" and s.value == 1
        for s in families["scm_heartbeat_seconds"].samples
    )
    assert "process_resident_memory_bytes" in families  # the runtime source
    assert not any(s.name.endswith("_created") for f in families.values() for s in f.samples)


def test_jmx_has_one_bean_per_source_and_filters_by_query() -> None:
    metrics = MetricsSystem("OzoneManager", process=False)
    Gauge("om_metrics_num_volumes", "volumes", registry=metrics.source("OMMetrics")).set(4)
    requests = Counter("om_requests", "requests", ["type"], registry=metrics.source("OMRequests"))
    requests.labels("CommitKey").inc()
    beans = metrics.jmx()["beans"]
    assert [b["name"] for b in beans] == [
        "Hadoop:service=OzoneManager,name=OMMetrics",
        "Hadoop:service=OzoneManager,name=OMRequests",
    ]
    assert beans[0]["om_metrics_num_volumes"] == 4
    assert beans[1]['om_requests_total{type="CommitKey"}'] == 1
    only = metrics.jmx("Hadoop:service=OzoneManager,name=OMM*")["beans"]
    assert [b["modelerType"] for b in only] == ["OMMetrics"]
    assert metrics.jmx("Hadoop:service=Other,*")["beans"] == []
    json.dumps(metrics.jmx())  # a histogram's +Inf never breaks the JSON


def test_jmx_json_has_no_infinity() -> None:
    metrics = MetricsSystem("HddsDatanode", process=False)
    Gauge("odd", "odd", registry=metrics.source("X")).set(float("inf"))
    assert metrics.jmx()["beans"][0]["odd"] == "inf"
