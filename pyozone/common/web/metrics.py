"""MetricsSystem: one daemon's metrics, grouped by source as Ozone's metrics2 sources are.

A source (`OMMetrics`, `SCMNodeMetrics`, `ReplicationManagerMetrics`, ...) is a prometheus_client
`CollectorRegistry` of its own: counters and histograms updated where things happen, or a collector that
reads the daemon's state when scraped (counts by state are never kept twice). `/prom` is every source in
Prometheus text; `/jmx` shows each source as one bean named `Hadoop:service=<service>,name=<source>`.

Names follow Hadoop's PrometheusMetricsSink where Ozone has the metric: the source's name and the metric's,
snake_cased and joined (`OMMetrics` + `NumKeyAllocate` -> `om_metrics_num_key_allocate`);
`prometheus_name` does it. prometheus_client appends `_total` to counters (OpenMetrics requires it) and
`_bucket`/`_sum`/`_count` to histograms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

LATENCY_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Histogram buckets for request and chunk latencies, in seconds: sub-millisecond to a stuck disk."""

disable_created_metrics()  # a `_created` series per counter is noise to Ozone users

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """`NumHBProcessed` -> `num_hb_processed`; `SCMNodeMetrics` -> `scm_node_metrics`."""
    return _CAMEL.sub("_", name).replace("-", "_").replace(".", "_").lower()


def prometheus_name(source: str, metric: str) -> str:
    """Hadoop's PrometheusMetricsSink name for `metric` of `source`."""
    return f"{snake(source)}_{snake(metric)}"


class MetricsSystem:
    """The metrics of one daemon. `service` is Ozone's (StorageContainerManager, OzoneManager,
    HddsDatanode, S3Gateway); it names the /jmx beans."""

    def __init__(self, service: str, process: bool = True) -> None:
        self.service = service
        self._sources: dict[str, CollectorRegistry] = {}
        if process:  # process_cpu_seconds_total, process_resident_memory_bytes, python_gc_*, ...
            runtime = self.source("JvmMetrics")
            for collector in (ProcessCollector, PlatformCollector, GCCollector):
                collector(registry=runtime)

    def source(self, name: str) -> CollectorRegistry:
        """The registry of source `name` (made on first use): pass it as `registry=` to a Counter,
        Gauge or Histogram, or `register` a collector on it."""
        registry = self._sources.get(name)
        if registry is None:
            registry = self._sources[name] = CollectorRegistry(auto_describe=True)
        return registry

    def add_collector(self, source: str, collector: Collector) -> None:
        self.source(source).register(collector)

    def collect(self) -> Iterator[Metric]:
        """Every metric family of every source (what generate_latest asks of a registry)."""
        for registry in self._sources.values():
            yield from registry.collect()

    def prometheus_text(self) -> bytes:
        return generate_latest(self)  # type: ignore[arg-type]  # any object with collect() will do

    def jmx(self, query: str | None = None) -> dict[str, Any]:
        """`{"beans": [...]}` as Hadoop's /jmx answers: one bean per source, an attribute per sample
        (labelled samples as `name{label="value"}`). `query` as Hadoop's `?qry=`: a bean name, `*` as a
        wildcard."""
        pattern = _bean_pattern(query)
        beans = []
        for source, registry in sorted(self._sources.items()):
            name = f"Hadoop:service={self.service},name={source}"
            if pattern is not None and not pattern.fullmatch(name):
                continue
            beans.append({"name": name, "modelerType": source, **_attributes(registry.collect())})
        return {"beans": beans}


def _bean_pattern(query: str | None) -> re.Pattern[str] | None:
    if not query:
        return None
    return re.compile(".*".join(re.escape(part) for part in query.split("*")))


def _attributes(families: Iterable[Metric]) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    for family in families:
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            key = f"{sample.name}{{{labels}}}" if labels else sample.name
            attributes[key] = _json_number(sample.value)
    return attributes


def _json_number(value: float) -> float | int | str:
    """JSON has no infinity or NaN (a histogram's +Inf bucket bound is a label, not a value)."""
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return int(value) if value.is_integer() else value
