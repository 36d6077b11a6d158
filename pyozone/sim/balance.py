"""`pyozone sim --balancer --add-empty-datanodes N`: the Container Balancer's run on the simulator.

Once the containers are placed (or at once, without `--containers`), N empty datanodes join, one rack
after another; when SCM's services are ready and they are healthy, the balancer starts with the
configuration in force (hdds.container.balancer.*), and each status row reports how far apart the
datanodes' utilizations still are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyozone.hdds.states import NodeState
from pyozone.scm.balancer.iteration import eligible_usages
from pyozone.scm.balancer.usage import average_utilization
from pyozone.scm.scm import StorageContainerManager
from pyozone.sim.cluster import SimCluster


@dataclass(frozen=True, slots=True)
class UtilizationSpread:
    """The utilization of the datanodes the balancer weighs (eligible_usages: healthy, in service, include/
    exclude.datanodes, some capacity): lowest, cluster average, highest."""

    datanodes: int
    low: float
    average: float
    high: float

    @classmethod
    def of(cls, scm: StorageContainerManager) -> UtilizationSpread:
        usages = eligible_usages(scm.nodes, scm.balancer.config)
        values = [u.utilization() for u in usages] or [0.0]
        return cls(len(usages), min(values), average_utilization(usages), max(values))

    def within(self, threshold_ratio: float) -> bool:
        return self.high - self.average <= threshold_ratio and self.average - self.low <= threshold_ratio


class BalancerRun:
    """Called after each status row: adds the empty datanodes once the cluster holds its containers, then
    starts the balancer once they are healthy; `row()` is the balancer's line for the status row."""

    def __init__(
        self, cluster: SimCluster, empty: int, start: bool, placed: Callable[[], bool], racks: int
    ) -> None:
        self.cluster, self.empty, self.start, self.placed, self.racks = cluster, empty, start, placed, racks
        self.added: list[str] = []
        self.started = False

    def __call__(self) -> None:
        cluster, scm = self.cluster, self.cluster.scm
        if self.empty and not self.added and self.placed() and not scm.safe_mode.in_safe_mode():
            first = len(cluster.datanodes)
            self.added = [
                cluster.add_datanode(rack=f"/rack{(first + i) % self.racks + 1}") for i in range(self.empty)
            ]
        if not self.start or self.started or not self.placed() or not scm.services_ready():
            return
        if any(
            scm.nodes.get(dn) is None or scm.nodes.node(dn).status.health is not NodeState.HEALTHY
            for dn in self.added
        ):
            return
        scm.balancer.start()
        self.started = True

    def row(self) -> dict[str, Any] | None:
        if not self.start:
            return None
        balancer = self.cluster.scm.balancer
        spread = UtilizationSpread.of(self.cluster.scm)
        statuses = balancer.iteration_statuses()
        # the run's finished iterations by its counters (SCM keeps only the latest iterations' statuses),
        # and the one under way
        done, current = balancer.run_metrics, [] if balancer.iteration is None else statuses[-1:]
        return {
            "event": "balancer",
            "status": balancer.status.name,
            "iteration": statuses[-1].number if statuses else 0,
            "movesCompleted": done.num_container_moves_completed + sum(s.moves_completed for s in current),
            "movesFailed": done.num_container_moves_failed
            + done.num_container_moves_timeout
            + sum(s.moves_failed + s.moves_timed_out for s in current),
            "utilizationLow": round(spread.low * 100, 2),
            "utilizationAverage": round(spread.average * 100, 2),
            "utilizationHigh": round(spread.high * 100, 2),
            "stopReason": balancer.stop_reason,
        }


def row_text(row: dict[str, Any]) -> str:
    stopped = f", stopped: {row['stopReason']}" if row["stopReason"] else ""
    return (
        f"-- balancer {row['status']} iteration {row['iteration']}: utilization "
        f"{row['utilizationLow']:.1f}% .. {row['utilizationHigh']:.1f}% "
        f"(average {row['utilizationAverage']:.1f}%), "
        f"{row['movesCompleted']} moves done, {row['movesFailed']} failed{stopped}"
    )
