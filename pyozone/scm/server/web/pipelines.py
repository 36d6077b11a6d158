"""Pipelines and the Pipeline Statistics of Ozone's "Calculating Ratis Pipeline Limits" doc: what SCM keeps,
against what its limits allow.

/api/v1/pipelines              `admin pipeline list --json` items, paginated; ?state= ?replication=
/api/v1/pipelines/statistics   counts per replication config and state, the three limits in force, the
                               planner's target (step by step) against the open RATIS/THREE pipelines,
                               and how many datanodes are below, at or over their own limit
/api/v1/pipelines/datanodes    each datanode's RATIS/THREE pipelines against its own limit, paginated
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pyozone.common.web.api import ApiHandler, BadQuery, Query, paginate
from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.states import PipelineState
from pyozone.protocol.json_views import pipeline_dict
from pyozone.scm.pipeline_limits import LIVE_STATES, check_ratis_three_limit
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.listings import pipeline_view
from pyozone.scm.server.web.planning import PlanCache, inventory_node
from pyozone.scm.settings import ScmSettings

STATES = tuple(s.name for s in PipelineState)


def pipelines_api(core: StorageContainerManager) -> dict[str, ApiHandler]:
    plans = PlanCache(core.settings)

    def listing(q: Query) -> dict[str, Any]:
        state = q.str("state", choices=STATES)
        config = _replication(q.str("replication"))
        chosen = [
            p
            for p in core.pipelines.pipelines()
            if (state is None or p.state.name == state) and (config is None or p.replication_config == config)
        ]
        # `admin pipeline list`'s order; a few thousand pipelines at most, even at 5,000 datanodes
        chosen.sort(key=lambda p: (str(p.replication_config), p.state.value, p.id))
        return paginate(chosen, q.page(), lambda p: pipeline_dict(pipeline_view(core.nodes, p)))

    def statistics(_: Query) -> dict[str, Any]:
        return statistics_dict(core, plans)

    def per_datanode(q: Query) -> dict[str, Any]:
        nodes = sorted(core.nodes.nodes(), key=lambda i: (i.details.network_location, i.details.hostname))
        return paginate(nodes, q.page(), lambda info: datanode_pipelines(core, info))

    return {
        "/api/v1/pipelines": listing,
        "/api/v1/pipelines/statistics": statistics,
        "/api/v1/pipelines/datanodes": per_datanode,
    }


def _replication(text: str | None) -> ReplicationConfig | None:
    if text is None:
        return None
    try:
        return ReplicationConfig.parse(text)
    except ValueError as e:
        raise BadQuery(f"replication={text[:40]!r}: {e}") from None


def datanode_pipelines(core: StorageContainerManager, info: DatanodeInfo) -> dict[str, Any]:
    """A datanode's non-closed RATIS/THREE pipelines (what its limit caps) against that limit."""
    return {
        "uuid": info.uuid,
        "hostname": info.details.hostname,
        "networkLocation": info.details.network_location,
        "healthState": info.status.health.name,
        "operationalState": info.status.operational_state.name,
        "ratisThree": core.pipelines.ratis_three_count(info.uuid),
        "limit": core.nodes.pipeline_limit(info.uuid),
        "pipelines": len(core.nodes.pipelines(info.uuid)),
        "metadataVolumes": info.metadata_volume_count(),
        "healthyVolumes": info.healthy_volume_count(),
    }


def statistics_dict(core: StorageContainerManager, plans: PlanCache) -> dict[str, Any]:
    pipelines = core.pipelines
    by_config: dict[str, Counter[str]] = {}
    for p in pipelines.pipelines():
        by_config.setdefault(str(p.replication_config), Counter())[p.state.name] += 1
    healthy = sorted(core.nodes.healthy_in_service(), key=lambda i: i.uuid)
    check = check_ratis_three_limit(pipelines.limits, pipelines.count, len(healthy))
    plan = plans.plan(tuple(inventory_node(i) for i in healthy))
    return {
        "pipelines": [
            {"replicationConfig": name, "states": {s: counts[s] for s in STATES}, "total": counts.total()}
            for name, counts in sorted(by_config.items())
        ],
        "limits": _limits(core.settings),
        "clusterLimit": {"branch": check.branch, "allowed": check.allowed},
        "healthyInServiceDatanodes": len(healthy),
        "target": None if plan["plan"] is None else plan["plan"]["ratis_three"],
        "openRatisThree": pipelines.count(RATIS_THREE, (PipelineState.OPEN,)),
        "liveRatisThree": pipelines.count(RATIS_THREE, LIVE_STATES),
        "planner": plan,
        "datanodeLimits": _limit_summary(core),
    }


def _limits(settings: ScmSettings) -> dict[str, int | bool]:
    """The settings the pipeline limits come from, by their ozone-site.xml keys."""
    return {
        "ozone.scm.datanode.pipeline.limit": settings.pipeline_limits.datanode_pipeline_limit,
        "ozone.scm.pipeline.per.metadata.disk": settings.pipeline_limits.per_metadata_disk,
        "ozone.scm.ratis.pipeline.limit": settings.pipeline_limits.ratis_pipeline_limit,
        "ozone.scm.pipeline.creation.auto.factor.one": settings.pipeline.creation_auto_factor_one,
    }


def _limit_summary(core: StorageContainerManager) -> dict[str, int]:
    """How many healthy in-service datanodes (the ones placement may choose) are below, at or over their own
    RATIS/THREE limit, zero-limit nodes apart; the rest are counted as `notPlaceable`, since a dead or
    leaving node's free slots are none."""
    nodes = core.nodes.nodes()
    placeable = core.nodes.healthy_in_service()
    summary = {
        "datanodes": len(nodes),
        "notPlaceable": len(nodes) - len(placeable),
        "noLimit": 0,
        "belowLimit": 0,
        "atLimit": 0,
        "overLimit": 0,
    }
    for info in placeable:
        limit = core.nodes.pipeline_limit(info.uuid)
        count = core.pipelines.ratis_three_count(info.uuid)
        if limit == 0:
            summary["noLimit"] += 1
        elif count < limit:
            summary["belowLimit"] += 1
        elif count == limit:
            summary["atLimit"] += 1
        else:
            summary["overLimit"] += 1
    return summary
