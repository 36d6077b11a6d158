"""ContainerBalancerMetrics: the balancer's counters over every run since SCM started (Ozone's names,
snake_cased), and what the latest iteration found unbalanced. The latest iteration's own counts are its
status (hdds/balancer.py IterationStatus); SCM's /prom reads both (scm/server/metrics.py)."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.balancer import IterationStatus


@dataclass(slots=True)
class ContainerBalancerMetrics:
    num_iterations: int = 0
    num_container_moves_scheduled: int = 0
    num_container_moves_completed: int = 0
    num_container_moves_failed: int = 0
    num_container_moves_timeout: int = 0
    data_size_moved_bytes: int = 0
    num_datanodes_unbalanced: int = 0
    """Gauge: datanodes over or under the limits when the latest iteration started."""
    data_size_unbalanced_bytes: int = 0
    """Gauge: the larger of the bytes above the upper limit and below the lower limit, then."""

    def iteration_ended(self, status: IterationStatus) -> None:
        self.num_iterations += 1
        self.num_container_moves_scheduled += status.moves_scheduled
        self.num_container_moves_completed += status.moves_completed
        self.num_container_moves_failed += status.moves_failed
        self.num_container_moves_timeout += status.moves_timed_out
        self.data_size_moved_bytes += status.size_moved
