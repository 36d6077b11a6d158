"""Datanodes for the web UI.

/api/v1/datanodes          `admin datanode list --json` items, paginated, in its order (rack, hostname);
                           ?health= ?opState=; each item adds how long ago SCM heard from the node (on
                           SCM's clock, so right in the simulator too), its volumes and command queue
/api/v1/charts/datanodes   per-datanode usage and RATIS/THREE pipeline counts, as parallel arrays for
                           the charts (a few numbers a node: 5,000 nodes are ~150 KB)
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pyozone.common.web.api import ApiHandler, Query, paginate
from pyozone.hdds.datanode import DatanodeInfo, StorageReport
from pyozone.hdds.states import NodeOperationalState, NodeState
from pyozone.protocol.json_views import listing_dict
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.listings import datanode_listing

HEALTH = tuple(s.name for s in NodeState)
OPERATIONAL = tuple(s.name for s in NodeOperationalState)


def datanodes_api(core: StorageContainerManager) -> dict[str, ApiHandler]:
    def listing(q: Query) -> dict[str, Any]:
        health = q.str("health", choices=HEALTH)
        op = q.str("opState", choices=OPERATIONAL)
        chosen = [
            info
            for info in _in_order(core)
            if (health is None or info.status.health.name == health)
            and (op is None or info.status.operational_state.name == op)
        ]
        return paginate(chosen, q.page(), lambda info: datanode_dict(core, info))

    def charts(_: Query) -> dict[str, Any]:
        nodes = _in_order(core)
        return {
            "datanodes": len(nodes),
            "hostnames": [i.details.hostname for i in nodes],
            "usedPercent": [_used_percent(i) for i in nodes],
            "ratisThree": [core.pipelines.ratis_three_count(i.uuid) for i in nodes],
            "pipelineLimit": [core.nodes.pipeline_limit(i.uuid) for i in nodes],
        }

    return {"/api/v1/datanodes": listing, "/api/v1/charts/datanodes": charts}


def _in_order(core: StorageContainerManager) -> list[DatanodeInfo]:
    """`admin datanode list`'s order: by rack, then hostname."""
    return sorted(core.nodes.nodes(), key=lambda i: (i.details.network_location, i.details.hostname))


def _used_percent(info: DatanodeInfo) -> float:
    capacity = info.capacity()
    return round(100 * info.used() / capacity, 2) if capacity else 0.0


def datanode_dict(core: StorageContainerManager, info: DatanodeInfo) -> dict[str, Any]:
    """The CLI's listing of the node, plus what the Datanodes page shows besides."""
    queued = Counter(c.type.name for c in core.nodes.commands.peek(info.uuid))
    return listing_dict(datanode_listing(core, info)) | {
        "lastHeartbeatAgoMs": core.clock.now_ms() - info.last_heartbeat_ms,
        "volumes": [_volume(v) for v in info.report.storage],
        "metadataVolumes": [_volume(v) for v in info.report.metadata_storage],
        "commandQueue": {
            "queuedInScm": dict(queued),
            "reportedByDatanode": {t.name: n for t, n in info.command_counts.items() if n},
        },
    }


def _volume(report: StorageReport) -> dict[str, Any]:
    return {
        "location": report.location,
        "capacity": report.capacity,
        "used": report.used,
        "remaining": report.remaining,
        "failed": report.failed,
    }
