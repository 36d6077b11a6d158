"""`admin pipeline list` names each EC member's replica index (member i holds index i + 1)."""

from __future__ import annotations

from pyozone.cli.admin.pipeline import _members, pipeline_dict
from pyozone.framework.scm_admin import PipelineView
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState


def _view(config: ReplicationConfig, count: int) -> PipelineView:
    nodes = tuple(f"uuid-{i}" for i in range(count))
    pipeline = Pipeline("p1", config, PipelineState.OPEN, nodes, 0, 0)
    return PipelineView(
        pipeline, {dn: DatanodeDetails(dn, f"dn{i}", "127.0.0.1") for i, dn in enumerate(nodes)}
    )


def test_an_ec_pipeline_lists_each_members_replica_index():
    view = _view(ReplicationConfig.parse("rs-3-2-1024k"), 5)
    assert [n["replicaIndex"] for n in pipeline_dict(view)["nodes"]] == [1, 2, 3, 4, 5]
    assert _members(view) == "dn0#1,dn1#2,dn2#3,dn3#4,dn4#5"


def test_a_ratis_pipeline_has_no_replica_indexes():
    view = _view(RATIS_THREE, 3)
    assert all("replicaIndex" not in n for n in pipeline_dict(view)["nodes"])
    assert _members(view) == "dn0,dn1,dn2"
