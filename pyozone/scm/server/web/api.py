"""SCM's JSON APIs: what the pages (static/scm.js) read, over the core the daemon or `pyozone sim` drives.

Every path is GET, answers JSON, and paginates its lists (`?offset=&limit=`, answered as
`{"total", "offset", "limit", "items"}`). List items are the dicts `pyozone admin ... --json` prints
(protocol/json_views.py). Each module's docstring lists its paths:

    overview.py     /api/v1/overview, /api/v1/safemode
    pipelines.py    /api/v1/pipelines, /api/v1/pipelines/statistics, /api/v1/pipelines/datanodes
    datanodes.py    /api/v1/datanodes, /api/v1/charts/datanodes
    containers.py   /api/v1/containers/report, /api/v1/containers, /api/v1/containers/{id},
                    /api/v1/history/containers
    balancer.py     /api/v1/balancer

Handlers run on the event loop, between the core's ticks and heartbeats, so each answer is one consistent
reading of the core. The overview and safe mode are open to every caller; what says where data lives
(datanodes, pipelines, containers) answers 403 unless `may_read` lets the caller read it, as SCM's admin
protocol does (common/web/ops.py readers_only: administrators and read-only administrators).
"""

from __future__ import annotations

from pyozone.common.web.api import ApiHandler, guarded
from pyozone.common.web.ops import ReadCheck
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.web.balancer import balancer_api
from pyozone.scm.server.web.containers import containers_api
from pyozone.scm.server.web.datanodes import datanodes_api
from pyozone.scm.server.web.history import ContainerHistory
from pyozone.scm.server.web.overview import overview_api
from pyozone.scm.server.web.pipelines import pipelines_api

READERS_ONLY = (
    "only administrators and read-only administrators may read SCM's datanodes, pipelines and containers"
)


def scm_api(
    core: StorageContainerManager, scm_id: str, may_read: ReadCheck | None = None
) -> dict[str, ApiHandler]:
    """The handlers by path. Starts sampling the containers-over-time history on the core's schedule.
    `may_read`: who may read datanodes, pipelines and containers (None: everyone, as `pyozone sim`)."""
    placement = {
        **pipelines_api(core),
        **datanodes_api(core),
        **containers_api(core, ContainerHistory.attach(core)),
        **balancer_api(core),
    }
    if may_read is not None:
        placement = guarded(placement, may_read, READERS_ONLY)
    return {**overview_api(core, scm_id), **placement}
