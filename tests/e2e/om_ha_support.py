"""The OM HA end-to-end tests' service: three (or more) `pyozone om` of one service (benchmarks/om_ha.py's
`HaOms`) beside a cluster's SCM and datanodes, whose lone OM is stopped first; and the OM that leads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from benchmarks.om_ha import HaOms
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.polling import wait_for


@contextmanager
def om_service(
    cluster: LiveCluster, oms: HaOms, timeout_s: float = 60
) -> Iterator[tuple[LiveCluster, HaOms]]:
    """Three datanodes and the service `oms` in the cluster's lone OM's place; everything stopped after."""
    try:
        cluster.up(3)
        cluster.kill("om")  # the cluster's lone OM: the service takes its place
        oms.redraw_ports()  # planned before the cluster's daemons took theirs
        oms.start_all(timeout_s=timeout_s)
        yield cluster, oms
    finally:
        oms.stop_all()
        cluster.stop()


def leader(oms: HaOms, timeout_s: float = 60) -> str:
    """The OM that leads and executes (its /api/v1/ratis says ready), waited for."""

    def ready() -> str | None:
        for node in oms.processes:
            view = oms.raft_view(node)
            if view is not None and view.get("ready"):
                return node
        return None

    return wait_for(ready, timeout_s, "an OM that leads and executes", interval_s=0.5)
