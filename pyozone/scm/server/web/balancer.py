"""The Container Balancer for the web UI.

/api/v1/balancer   whether it runs (or why it stopped), its configuration and iterations (as `admin
                   containerbalancer status -v -H`), the cluster's average utilization with the
                   threshold, and every healthy in-service datanode's utilization now and when the run
                   started, in percent, most used first, each classed OVER, UNDER or WITHIN the threshold
"""

from __future__ import annotations

from typing import Any

from pyozone.common.web.api import ApiHandler, Query
from pyozone.scm.balancer.iteration import eligible_usages
from pyozone.scm.balancer.usage import average_utilization
from pyozone.scm.scm import StorageContainerManager


def balancer_api(core: StorageContainerManager) -> dict[str, ApiHandler]:
    def balancer(_: Query) -> dict[str, Any]:
        return balancer_dict(core)

    return {"/api/v1/balancer": balancer}


def balancer_dict(core: StorageContainerManager) -> dict[str, Any]:
    b = core.balancer
    config = b.config if b.is_running() else b.default_config
    usages = eligible_usages(core.nodes, config)
    average = average_utilization(usages)
    threshold = config.threshold_ratio
    hostnames = {info.uuid: info.details.hostname for info in core.nodes.nodes()}

    def state(utilization: float) -> str:
        if utilization > average + threshold:
            return "OVER"
        return "UNDER" if utilization < average - threshold else "WITHIN"

    started = b.usage_at_start
    return {
        "status": b.status.name,
        "stopReason": b.stop_reason,
        "startedAt": b.started_at_ms,
        "thresholdPercent": config.threshold,
        "averagePercent": round(average * 100, 2),
        "configuration": config.to_record(should_run=b.is_running(), next_iteration_index=b.next_index),
        "iterations": [s.to_dict() for s in b.iteration_statuses()],
        "datanodes": [
            {
                "uuid": u.datanode,
                "hostname": hostnames.get(u.datanode, u.datanode),
                "utilizationPercent": round(u.utilization() * 100, 2),
                "atStartPercent": round(started[u.datanode] * 100, 2) if u.datanode in started else None,
                "used": u.used,
                "capacity": u.capacity,
                "state": state(u.utilization()),
            }
            for u in usages
        ],
    }
