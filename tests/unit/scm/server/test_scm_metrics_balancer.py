"""ContainerBalancerMetrics on /prom (scm/server/metrics.py) over the real core: an iteration's moves, then
the run's counters, the latest iteration's gauges and what it found unbalanced."""

from __future__ import annotations

from pyozone.common.web.metrics import MetricsSystem
from pyozone.scm.server.metrics import register_scm_metrics
from tests.unit.scm.balancer.balancer_harness import BalancerHarness
from tests.unit.scm.balancer.test_balancer import complete_moves, skewed
from tests.unit.scm.server.test_scm_metrics import scrape, value

GB = 1 << 30
PREFIX = "container_balancer_metrics_"


def test_an_iteration_counted_on_prom() -> None:
    h = BalancerHarness()
    skewed(h)  # dn0 at 80% of 100 GB, dn5 empty, average 40%: 30 GB over the upper limit, 30 GB under
    metrics = MetricsSystem("StorageContainerManager", process=False)
    register_scm_metrics(metrics, h.scm)
    h.balancer.start()
    h.scm.tick()
    during = scrape(metrics)
    assert value(during, PREFIX + "num_container_moves_scheduled_in_latest_iteration") == 3
    assert value(during, PREFIX + "num_container_moves_completed_in_latest_iteration") == 0
    assert value(during, PREFIX + "num_datanodes_unbalanced") == 2
    assert value(during, PREFIX + "data_size_unbalanced_gb") == 30
    assert value(during, PREFIX + "num_iterations_total") == 0

    complete_moves(h)
    h.scm.tick()
    after = scrape(metrics)
    assert value(after, PREFIX + "num_iterations_total") == 1
    assert value(after, PREFIX + "num_container_moves_completed_total") == 3
    assert value(after, PREFIX + "num_container_moves_failed_total") == 0
    assert value(after, PREFIX + "data_size_moved_gb_total") == 3  # Ozone's DataSizeMovedGB (R24 D9)
    assert value(after, PREFIX + "data_size_moved_gb_in_latest_iteration") == 3
    assert value(after, PREFIX + "data_size_moved_bytes_in_latest_iteration") == 3 << 30
    assert value(after, PREFIX + "num_datanodes_involved_in_latest_iteration") == 2
