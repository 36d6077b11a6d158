"""HealthyPipelineSafeModeRule and OneReplicaPipelineSafeModeRule (Ozone's pipeline rules)."""

from __future__ import annotations

import pytest

from pyozone.hdds.ids import RATIS_ONE, ReplicationConfig
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import NodeOperationalState, NodeState, PipelineState

PIPELINE_PCT = "hdds.scm.safemode.healthy.pipeline.pct"
ONE_REPLICA_PCT = "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct"


@pytest.mark.parametrize(
    ("pipelines", "healthy_pct", "one_replica_pct", "healthy", "one_replica"),
    [
        (8, "0.90", "1.0", 8, 8),
        (22, "0.10", "0.9", 3, 20),
        (8, "0", "0.9", 0, 8),
        (22, "0", "0.5", 0, 11),
    ],
)
def test_worked_thresholds(make_harness, pipelines, healthy_pct, one_replica_pct, healthy, one_replica):
    """TestSCMSafeModeManager#testSafeModeExitRuleWithPipelineAvailabilityCheck, min.datanode = 1."""
    h = make_harness(
        {"hdds.scm.safemode.min.datanode": "1", PIPELINE_PCT: healthy_pct, ONE_REPLICA_PCT: one_replica_pct}
    )
    for i in range(pipelines):
        h.add_pipeline(f"p{i:02}")
    h.build()
    assert h.rule("HealthyPipelineSafeModeRule").threshold == healthy
    assert h.rule("OneReplicaPipelineSafeModeRule").threshold == one_replica


def test_healthy_threshold_is_at_least_min_datanodes_div_3(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "7"})
    h.add_pipeline("p1")
    h.build()
    assert h.rule("HealthyPipelineSafeModeRule").threshold == 2


def test_healthy_pipeline_counts_a_pipeline_once(make_harness):
    h = make_harness({PIPELINE_PCT: "1.0"})
    h.add_pipeline("p1")
    h.add_pipeline("p2", ("d4", "d5", "d6"))
    h.build()
    rule = h.rule("HealthyPipelineSafeModeRule")
    h.open_pipeline("p1")
    h.open_pipeline("p1")
    assert rule.healthy_count == 1 and not rule.validate()
    h.open_pipeline("p2")
    assert rule.validate()


@pytest.mark.parametrize(
    "status",
    [
        NodeStatus(NodeOperationalState.IN_SERVICE, NodeState.STALE),
        NodeStatus(NodeOperationalState.IN_SERVICE, NodeState.HEALTHY_READONLY),
        NodeStatus(NodeOperationalState.IN_SERVICE, NodeState.DEAD),
        NodeStatus(NodeOperationalState.DECOMMISSIONING, NodeState.HEALTHY),
        NodeStatus(NodeOperationalState.IN_MAINTENANCE, NodeState.HEALTHY),
    ],
)
def test_healthy_pipeline_ignores_a_pipeline_with_a_bad_member(make_harness, status):
    h = make_harness()
    h.add_pipeline("p1")
    h.build()
    h.nodes.by_id["d2"].status = status
    h.open_pipeline("p1")
    assert h.rule("HealthyPipelineSafeModeRule").healthy_count == 0


def test_healthy_pipeline_ignores_unregistered_members_other_types_and_sizes(make_harness):
    h = make_harness()
    h.add_pipeline("unknown-member", ("d1", "d2", "nobody"))
    h.add_pipeline("one", ("d1",), config=RATIS_ONE)
    h.add_pipeline("ec", ("d1", "d2", "d3", "d4", "d5"), config=ReplicationConfig.parse("EC/RS-3-2-1024k"))
    h.add_pipeline("short", ("d1", "d2"))
    h.build()
    for pid in ("unknown-member", "one", "ec", "short"):
        h.open_pipeline(pid)
    assert h.rule("HealthyPipelineSafeModeRule").healthy_count == 0


def test_healthy_pipeline_counts_pipelines_created_in_safe_mode_and_refresh_rereads_threshold(make_harness):
    h = make_harness({PIPELINE_PCT: "0.5", "hdds.scm.safemode.min.datanode": "1"})
    for i in range(4):
        h.add_pipeline(f"p{i}")
    h.build()
    rule = h.rule("HealthyPipelineSafeModeRule")
    assert rule.threshold == 2
    for i in range(4, 10):
        h.add_pipeline(f"p{i}")
    h.open_pipeline("p9")
    assert rule.healthy_count == 1
    h.manager.refresh()
    assert rule.threshold == 5 and rule.healthy_count == 1


def test_one_replica_counts_reported_open_pipelines_of_the_initial_set(make_harness):
    h = make_harness({ONE_REPLICA_PCT: "1.0"})
    h.add_pipeline("p1")
    h.add_pipeline("p2", ("d4", "d5", "d6"))
    h.add_pipeline("allocated", state=PipelineState.ALLOCATED)
    h.add_pipeline("one", ("d1",), config=RATIS_ONE)
    h.build()
    rule = h.rule("OneReplicaPipelineSafeModeRule")
    assert rule.threshold == 2
    h.add_pipeline("new")  # created after start: not in the initial set
    h.report_pipelines("d1", ["p1", "allocated", "one", "new", "missing"])
    h.report_pipelines("d2", ["p1"])
    h.report_pipelines("d3", ["p1"])
    assert rule.reported_count == 1 and not rule.validate()
    h.pipelines.add(h.pipelines.by_id["p2"].with_state(PipelineState.CLOSED, 0))
    h.report_pipelines("d4", ["p2"])  # no longer OPEN
    assert rule.reported_count == 1
    h.pipelines.add(h.pipelines.by_id["p2"].with_state(PipelineState.OPEN, 0))
    h.report_pipelines("d4", ["p2"])
    assert rule.validate()


def test_one_replica_refresh_rereads_the_open_set(make_harness):
    h = make_harness({ONE_REPLICA_PCT: "1.0"})
    h.add_pipeline("p1")
    h.add_pipeline("p2", ("d4", "d5", "d6"))
    h.build()
    rule = h.rule("OneReplicaPipelineSafeModeRule")
    h.report_pipelines("d1", ["p1"])
    h.pipelines.add(h.pipelines.by_id["p2"].with_state(PipelineState.CLOSED, 0))
    h.manager.refresh()
    assert rule.threshold == 1
    assert h.statuses_by_name()["OneReplicaPipelineSafeModeRule"].validated
