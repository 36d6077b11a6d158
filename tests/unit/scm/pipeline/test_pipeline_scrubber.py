"""The pipeline scrubber (Ozone's PipelineManagerImpl.scrubPipelines) and pipelines persisted in the metadata
store."""

from __future__ import annotations

import pytest

from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState, SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import RecordCodec, StrKeyCodec

S = 1_000
M = 60 * S
CLOSE_CMD = SCMCommandType.closePipelineCommand


def stored_ids(cluster) -> set[str]:
    return {p.id for p in cluster.store.table("pipelines", StrKeyCodec(), RecordCodec(Pipeline)).values()}


# ---------------------------------------------------------------------------------------- scrubber
def test_allocated_pipeline_removed_after_five_minutes_not_before(cluster) -> None:
    cluster.add_nodes(3)
    p = cluster.pm.create_pipeline(RATIS_THREE)
    for dn in p.nodes:
        cluster.nm.clear_command_queue(dn)
    cluster.clock.advance(5 * M - 1)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.get(p.id).state is PipelineState.ALLOCATED
    cluster.clock.advance(1)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.find(p.id) is None
    assert p.id not in stored_ids(cluster)
    for dn in p.nodes:
        assert [c.pipeline_id for c in cluster.queued(dn, CLOSE_CMD)] == [p.id]


def test_allocated_timeout_is_configurable(make_cluster) -> None:
    c = make_cluster({"ozone.scm.pipeline.allocated.timeout": "30s"})
    c.add_nodes(3)
    p = c.pm.create_pipeline(RATIS_THREE)
    c.clock.advance(30 * S)
    c.pm.scrub_pipelines()
    assert c.pm.find(p.id) is None


def test_allocated_age_counts_from_creation(cluster) -> None:
    cluster.add_nodes(3)
    cluster.clock.advance(10 * M)
    p = cluster.pm.create_pipeline(RATIS_THREE)
    cluster.clock.advance(4 * M)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.find(p.id) is not None


def test_closed_pipeline_removed_after_66_seconds_not_before(cluster) -> None:
    cluster.add_nodes(3)
    p = cluster.pm.create_pipeline(RATIS_THREE)
    cluster.report_all(p)
    cluster.clock.advance(20 * M)  # long OPEN: the close time is what counts
    cluster.pm.close_pipeline(p.id)
    cluster.clock.advance(66 * S - 1)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.get(p.id).state is PipelineState.CLOSED
    cluster.clock.advance(1)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.find(p.id) is None
    assert all(len(cluster.queued(dn, CLOSE_CMD)) == 1 for dn in p.nodes)


def test_open_and_dormant_pipelines_are_not_aged_out(cluster) -> None:
    cluster.add_nodes(6)
    a = cluster.pm.create_pipeline(RATIS_THREE)
    b = cluster.pm.create_pipeline(RATIS_THREE)
    cluster.report_all(a)
    cluster.report_all(b)
    cluster.pm.deactivate_pipeline(b.id)
    cluster.clock.advance(24 * 60 * M)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.get(a.id).state is PipelineState.OPEN
    assert cluster.pm.get(b.id).state is PipelineState.DORMANT


def test_scrubber_applies_to_ratis_one_too(cluster) -> None:
    cluster.add_nodes(1)
    p = cluster.pm.create_pipeline(RATIS_ONE)
    cluster.clock.advance(5 * M)
    cluster.pm.scrub_pipelines()
    assert cluster.pm.find(p.id) is None


def reloaded_with_nodes(cluster, registered: list[str]):
    """A restarted SCM: the same store, a fresh NodeManager that has seen only `registered` register."""
    nm = NodeManager(ScmSettings.from_conf(cluster.conf), cluster.clock, cluster.events, NetworkTopology())
    for dn in registered:
        info = cluster.nm.node(dn)
        nm.register(info.details, info.report)
    return nm, cluster.new_pipeline_manager(nm)


def test_open_pipeline_with_unregistered_member_is_closed(cluster) -> None:
    cluster.add_nodes(6)
    lost = cluster.pm.create_pipeline(RATIS_THREE)
    kept = cluster.pm.create_pipeline(RATIS_THREE, excluded_nodes=lost.nodes)
    for p in (lost, kept):
        cluster.report_all(p)
    registered = [dn for dn in cluster.ids if dn != lost.nodes[1]]
    _, pm = reloaded_with_nodes(cluster, registered)
    pm.scrub_pipelines()
    assert pm.get(lost.id).state is PipelineState.CLOSED  # closed, not yet removed
    assert pm.get(kept.id).state is PipelineState.OPEN
    cluster.clock.advance(66 * S)
    pm.scrub_pipelines()
    assert pm.find(lost.id) is None


# ---------------------------------------------------------------------------------------- persistence
def test_pipelines_reload_from_the_store_with_their_states(cluster) -> None:
    cluster.add_nodes(9)
    allocated = cluster.pm.create_pipeline(RATIS_THREE)
    opened = cluster.pm.create_pipeline(RATIS_THREE)
    dormant = cluster.pm.create_pipeline(RATIS_THREE)
    closed = cluster.pm.create_pipeline(RATIS_THREE)
    one = cluster.pm.create_pipeline(RATIS_ONE)
    cluster.report_all(opened, leader=opened.nodes[2])
    cluster.report_all(dormant)
    cluster.pm.deactivate_pipeline(dormant.id)
    cluster.clock.advance(3 * S)
    cluster.pm.close_pipeline(closed.id)
    before = {p.id: p for p in cluster.pm.pipelines()}

    nm, pm = reloaded_with_nodes(cluster, cluster.ids)
    after = {p.id: p for p in pm.pipelines()}
    assert after.keys() == before.keys() == {allocated.id, opened.id, dormant.id, closed.id, one.id}
    for pid, old in before.items():
        new = after[pid]
        assert (new.state, new.nodes, new.replication_config, new.leader, new.suggested_leader) == (
            old.state,
            old.nodes,
            old.replication_config,
            old.leader,
            old.suggested_leader,
        )
        assert (new.created_ms, new.state_entered_ms) == (old.created_ms, old.state_entered_ms)
    assert pm.get(opened.id).leader == opened.nodes[2]
    assert pm.count(RATIS_THREE) == 3
    assert pm.count(RATIS_ONE) == 1
    for dn in cluster.ids:
        assert nm.pipelines(dn) == cluster.nm.pipelines(dn)
        assert pm.ratis_three_count(dn) == cluster.pm.ratis_three_count(dn)


def test_reloaded_pipelines_count_against_the_limits(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "1"})
    c.add_nodes(6)
    made, _ = c.create_until_refusal()
    assert len(made) == 2
    _, pm = reloaded_with_nodes(c, c.ids)
    assert pm.count(RATIS_THREE) == 2
    with pytest.raises(SCMException, match="exceed the limit per datanode: 1"):
        pm.create_pipeline(RATIS_THREE)


def test_deleted_pipelines_do_not_come_back(cluster) -> None:
    cluster.add_nodes(3)
    p = cluster.pm.create_pipeline(RATIS_THREE)
    cluster.pm.close_and_delete(p.id)
    _, pm = reloaded_with_nodes(cluster, cluster.ids)
    assert pm.pipelines() == []


def test_store_holds_every_live_pipeline(cluster) -> None:
    cluster.add_nodes(6)
    made, _ = cluster.create_until_refusal()
    assert stored_ids(cluster) == {p.id for p in made}
