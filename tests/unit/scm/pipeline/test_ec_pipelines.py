"""EC pipelines (Ozone's ECPipelineProvider): OPEN at once with data + parity members placed by rack
scatter, no datanode ever told about them, closed like any pipeline when a member goes."""

from __future__ import annotations

from collections import Counter

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import PipelineState
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.settings import ScmSettings

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
RS_6_3 = ReplicationConfig.parse("rs-6-3-1024k")
XOR_2_1 = ReplicationConfig.parse("xor-2-1-1024k")


@pytest.mark.parametrize("config", [RS_3_2, RS_6_3, XOR_2_1])
def test_ec_pipeline_is_open_at_once_with_one_member_per_index(cluster, config) -> None:
    cluster.add_nodes(10)
    pipeline = cluster.pm.create_pipeline(config)
    assert pipeline.state is PipelineState.OPEN
    assert len(pipeline.nodes) == len(set(pipeline.nodes)) == config.required_nodes
    assert pipeline.is_healthy() and pipeline.leader is None and pipeline.suggested_leader is None
    assert cluster.pm.count(config, (PipelineState.OPEN,)) == 1
    assert all(cluster.queued(dn) == [] for dn in cluster.ids), "no createPipeline command"


def test_ec_pipeline_is_persisted(make_cluster) -> None:
    c = make_cluster()
    c.add_nodes(5)
    pipeline = c.pm.create_pipeline(RS_3_2)
    again = c.new_pipeline_manager()
    assert again.get(pipeline.id) == pipeline


def test_members_scatter_over_racks(make_cluster) -> None:
    """Ten nodes on five racks: an rs-3-2 pipeline takes one node of each rack."""
    c = make_cluster(racks=[f"/r{i % 5}" for i in range(10)])
    c.add_nodes(10)
    for _ in range(20):
        pipeline = c.pm.create_pipeline(RS_3_2)
        assert len({c.rack(dn) for dn in pipeline.nodes}) == 5


def test_members_spread_evenly_over_fewer_racks(make_cluster) -> None:
    """Three racks for rs-6-3: at most three members on one rack (ceil(9 / 3))."""
    c = make_cluster(racks=[f"/r{i % 3}" for i in range(12)])
    c.add_nodes(12)
    for _ in range(20):
        pipeline = c.pm.create_pipeline(RS_6_3)
        assert max(Counter(c.rack(dn) for dn in pipeline.nodes).values()) == 3


def test_excluded_nodes_are_not_members(cluster) -> None:
    cluster.add_nodes(7)
    excluded = cluster.ids[:2]
    for _ in range(10):
        assert not set(excluded) & set(cluster.pm.create_pipeline(RS_3_2, excluded).nodes)


def test_an_unknown_excluded_node_does_not_count_against_the_choice(cluster) -> None:
    cluster.add_nodes(5)
    pipeline = cluster.pm.create_pipeline(RS_3_2, ["gone-datanode"])
    assert len(pipeline.nodes) == 5


def test_too_few_nodes_is_refused(cluster) -> None:
    cluster.add_nodes(4)
    with pytest.raises(SCMException) as e:
        cluster.pm.create_pipeline(RS_3_2)
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert cluster.pm.pipelines(RS_3_2) == []


def test_too_few_nodes_after_exclusions_is_refused(cluster) -> None:
    cluster.add_nodes(5)
    with pytest.raises(SCMException):
        cluster.pm.create_pipeline(RS_3_2, cluster.ids[:1])


def test_nodes_without_room_for_a_container_are_not_members(cluster, build) -> None:
    cluster.add_nodes(5)
    full = cluster.add(build.node_report(data_remaining=build.GB))
    for _ in range(10):
        assert full not in cluster.pm.create_pipeline(RS_3_2).nodes


def test_refused_before_the_safe_mode_precheck(cluster) -> None:
    cluster.add_nodes(5)
    cluster.precheck = False
    with pytest.raises(SCMException) as e:
        cluster.pm.create_pipeline(RS_3_2)
    assert e.value.code is ResultCode.SAFE_MODE_EXCEPTION


def test_refused_while_frozen(cluster) -> None:
    cluster.add_nodes(5)
    cluster.pm.frozen = True
    with pytest.raises(SCMException):
        cluster.pm.create_pipeline(RS_3_2)


def test_ec_pipelines_do_not_count_against_ratis_limits(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "1"})
    c.add_nodes(6)
    for _ in range(5):
        c.pm.create_pipeline(RS_3_2)
    made, _ = c.create_until_refusal()
    assert len(made) == 2


def test_a_datanode_report_of_an_ec_pipeline_is_ignored(cluster) -> None:
    cluster.add_nodes(5)
    pipeline = cluster.pm.create_pipeline(RS_3_2)
    cluster.report_all(pipeline)
    assert cluster.pm.get(pipeline.id) == pipeline
    assert all(cluster.queued(dn) == [] for dn in cluster.ids)


def test_closing_and_removing_sends_no_command_and_closes_the_container(cluster) -> None:
    cluster.add_nodes(5)
    pipeline = cluster.pm.create_pipeline(RS_3_2)
    cluster.pm.add_container_to_pipeline(pipeline.id, 7)
    cluster.pm.close_pipeline(pipeline.id)
    assert cluster.pm.get(pipeline.id).state is PipelineState.CLOSED
    assert 7 in cluster.events_of(SCMEvent.CLOSE_CONTAINER)
    cluster.pm.delete_pipeline(pipeline.id)
    assert cluster.pm.find(pipeline.id) is None
    assert all(cluster.queued(dn) == [] for dn in cluster.ids), "no closePipeline command"
    assert all(pipeline.id not in cluster.nm.pipelines(dn) for dn in pipeline.nodes)


def test_scrubber_removes_a_long_closed_ec_pipeline(cluster) -> None:
    cluster.add_nodes(5)
    pipeline = cluster.pm.create_pipeline(RS_3_2)
    cluster.pm.close_pipeline(pipeline.id)
    cluster.clock.advance(cluster.conf.get("ozone.scm.pipeline.destroy.timeout"))
    cluster.pm.scrub_pipelines()
    assert cluster.pm.find(pipeline.id) is None
    assert all(cluster.queued(dn) == [] for dn in cluster.ids)


def test_scrubber_closes_an_ec_pipeline_with_an_unregistered_member(make_cluster) -> None:
    """After an SCM restart a member that never registered again leaves its EC pipeline OPEN for ever:
    no datanode knows the pipeline to ask for its close (Ozone's isOpenWithUnregisteredNodes)."""
    c = make_cluster()
    c.add_nodes(5)
    pipeline = c.pm.create_pipeline(RS_3_2)
    fresh_nodes = NodeManager(ScmSettings.from_conf(c.conf), c.clock, EventQueue(), NetworkTopology())
    restarted = c.new_pipeline_manager(fresh_nodes)
    assert restarted.get(pipeline.id).state is PipelineState.OPEN
    restarted.scrub_pipelines()
    assert restarted.get(pipeline.id).state is PipelineState.CLOSED
