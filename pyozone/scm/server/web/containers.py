"""Containers for the web UI.

    /api/v1/containers/report      the Replication Manager's report, exactly `admin container report --json`
    /api/v1/containers             `admin container list --json` items in id order, paginated; ?state=
    /api/v1/containers/{id}        `admin container info --json`, plus the health the RM's last check found
                                   and the hostnames of the datanodes it names
    /api/v1/history/containers     containers by state over time (history.py)

A page of the list reads only its own records: ContainerManager hands the ids in order (a sort of
nearly-sorted ints, ~20 ms at 1M) and only the page's containers are rendered.
"""

from __future__ import annotations

from typing import Any

from pyozone.common.web.api import ApiHandler, NotFound, Query, paginate
from pyozone.hdds.states import LifeCycleState
from pyozone.protocol.json_views import container_dict, view_dict
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.listings import container_view
from pyozone.scm.server.web.history import ContainerHistory

STATES = tuple(s.name for s in LifeCycleState)
MAX_CONTAINER_ID = (1 << 63) - 1


def containers_api(core: StorageContainerManager, history: ContainerHistory) -> dict[str, ApiHandler]:
    def report(_: Query) -> dict[str, Any]:
        return core.replication.report.to_dict()

    def listing(q: Query) -> dict[str, Any]:
        state = q.str("state", choices=STATES)
        page = q.page()
        ids = core.containers.container_ids(None if state is None else LifeCycleState[state])
        return paginate(ids, page, lambda cid: container_dict(core.containers.get(cid)))

    def detail(q: Query) -> dict[str, Any]:
        cid = q.path_int("id", 1, MAX_CONTAINER_ID)
        if core.containers.find(cid) is None:
            raise NotFound(f"container {cid}: no such container")
        view = container_view(core, cid)
        named = {dn for r in view.replicas for dn in (r.datanode, r.origin_node_id)}
        named |= set(view.pipeline.pipeline.nodes if view.pipeline else ())
        return view_dict(view) | {
            "health": core.replication.container_health(cid).name,
            "hostnames": {dn: info.details.hostname for dn in sorted(named) if (info := core.nodes.get(dn))},
        }

    def over_time(_: Query) -> dict[str, Any]:
        return history.to_dict()

    return {
        "/api/v1/containers/report": report,
        "/api/v1/containers": listing,
        "/api/v1/containers/{id}": detail,  # after /report, which it would otherwise shadow
        "/api/v1/history/containers": over_time,
    }
