"""/api/v1/balancer over the real core: every datanode's utilization now and at the run's start, classed
against the average and the threshold, with the run's status and iterations."""

from __future__ import annotations

from pyozone.scm.server.web import scm_api
from tests.unit.scm.balancer.balancer_harness import BalancerHarness
from tests.unit.scm.balancer.test_balancer import complete_moves, skewed
from tests.unit.scm.server.web.web_helpers import ok


def test_utilization_before_and_during_a_run() -> None:
    h = BalancerHarness()
    skewed(h)
    api = scm_api(h.scm, "scm-1")
    before = ok(api, "/api/v1/balancer")
    assert before["status"] == "STOPPED" and before["iterations"] == []
    assert (before["averagePercent"], before["thresholdPercent"]) == (40.0, 10.0)
    by_host = {d["hostname"]: d for d in before["datanodes"]}
    assert before["datanodes"][0]["hostname"] == "dn0.test"  # most used first
    assert (by_host["dn0.test"]["state"], by_host["dn5.test"]["state"]) == ("OVER", "UNDER")
    assert by_host["dn1.test"]["state"] == "WITHIN" and by_host["dn0.test"]["atStartPercent"] is None

    h.balancer.start()
    h.scm.tick()
    complete_moves(h)
    h.set_used(0, 77)
    h.set_used(5, 3)
    during = ok(api, "/api/v1/balancer")
    assert during["status"] == "RUNNING" and during["configuration"]["shouldRun"] is True
    by_host = {d["hostname"]: d for d in during["datanodes"]}
    assert (by_host["dn0.test"]["utilizationPercent"], by_host["dn0.test"]["atStartPercent"]) == (77.0, 80.0)
    assert (by_host["dn5.test"]["utilizationPercent"], by_host["dn5.test"]["atStartPercent"]) == (3.0, 0.0)
    [iteration] = during["iterations"]
    assert iteration["iterationResult"] is None and iteration["containerMovesScheduled"] == 3
