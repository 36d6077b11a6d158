"""The cluster at a glance (`/api/v1/overview`) and safe mode (`/api/v1/safemode`).

Datanode usage statistics are Ozone's (SCMNodeManager's usage info): the used share of each healthy
in-service datanode's capacity, summarised as min, median, max and standard deviation, in percent. A node
reporting no capacity is left out (its share means nothing).
"""

from __future__ import annotations

import statistics
from typing import Any

from pyozone.common.web.api import ApiHandler, Query
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, PipelineState
from pyozone.protocol.json_views import safemode_dict
from pyozone.scm.scm import StorageContainerManager


def overview_api(core: StorageContainerManager, scm_id: str) -> dict[str, ApiHandler]:
    def overview(_: Query) -> dict[str, Any]:
        return overview_dict(core, scm_id)

    def safemode(_: Query) -> dict[str, Any]:
        safe_mode = core.safe_mode
        return safemode_dict(safe_mode.in_safe_mode(), safe_mode.rule_statuses()) | {
            "preCheckComplete": safe_mode.precheck_passed()
        }

    return {"/api/v1/overview": overview, "/api/v1/safemode": safemode}


def overview_dict(core: StorageContainerManager, scm_id: str) -> dict[str, Any]:
    nodes = core.nodes.nodes()
    health = dict.fromkeys((s.name for s in NodeState), 0)
    operational = dict.fromkeys((s.name for s in NodeOperationalState), 0)
    for info in nodes:
        health[info.status.health.name] += 1
        operational[info.status.operational_state.name] += 1
    capacity, used, remaining = core.nodes.storage_totals()
    pipelines = core.pipelines
    report = core.replication.report
    return {
        "clusterId": core.cluster_id,
        "scmId": scm_id,
        "inSafeMode": core.safe_mode.in_safe_mode(),
        "datanodes": {"total": len(nodes), "health": health, "operationalState": operational},
        "capacity": capacity,
        "used": used,
        "remaining": remaining,
        "usage": usage_statistics(core),
        "pipelines": {
            "total": len(pipelines.pipelines()),
            "openRatisThree": pipelines.count(RATIS_THREE, (PipelineState.OPEN,)),
        },
        "containers": {"total": core.containers.count()}
        | {s.name: core.containers.count(s) for s in LifeCycleState},
        "replicationManager": {
            "running": core.replication.is_running(),
            "reportTimeStamp": report.timestamp_ms,
        },
    }


def usage_statistics(core: StorageContainerManager) -> dict[str, Any]:
    """min, median, max and (population) standard deviation of the used percent, over the healthy
    in-service datanodes with capacity; all None when there are none."""
    shares = [100 * i.used() / c for i in core.nodes.healthy_in_service() if (c := i.capacity()) > 0]
    if not shares:
        return {"datanodes": 0, "min": None, "median": None, "max": None, "stdev": None}
    return {
        "datanodes": len(shares),
        "min": round(min(shares), 2),
        "median": round(statistics.median(shares), 2),
        "max": round(max(shares), 2),
        "stdev": round(statistics.pstdev(shares), 2),
    }
