"""Pipeline states and transitions, reports, actions and removal (Ozone's PipelineManagerImpl,
PipelineReportHandler)."""

from __future__ import annotations

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.states import PipelineState, SCMCommandType
from pyozone.scm.events import SCMEvent

ALLOCATED, OPEN, DORMANT, CLOSED = (
    PipelineState.ALLOCATED,
    PipelineState.OPEN,
    PipelineState.DORMANT,
    PipelineState.CLOSED,
)
CLOSE_CMD = SCMCommandType.closePipelineCommand
UNKNOWN_PID = "11111111-2222-4333-8444-555555555555"
EC_3_2 = ReplicationConfig.parse("rs-3-2-1024k")


@pytest.fixture
def three(cluster):
    cluster.add_nodes(4)
    return cluster.pm.create_pipeline(RATIS_THREE)


def state(cluster, pipeline) -> PipelineState:
    return cluster.pm.get(pipeline.id).state


def drain(cluster) -> None:
    for dn in cluster.ids:
        cluster.nm.clear_command_queue(dn)


def refused(fn, *args) -> None:
    with pytest.raises(SCMException) as err:
        fn(*args)
    assert err.value.code is ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED


# ----------------------------------------------------------------------------------------- ALLOCATED -> OPEN
def test_opens_only_when_every_member_reported_and_a_leader_is_known(cluster, three) -> None:
    a, b, c = three.nodes
    cluster.pm.process_pipeline_report(a, three.id, is_leader=True)
    cluster.pm.process_pipeline_report(b, three.id, is_leader=False)
    assert state(cluster, three) is ALLOCATED
    assert not cluster.pm.get(three.id).is_healthy()
    cluster.pm.process_pipeline_report(c, three.id, is_leader=False)
    assert state(cluster, three) is OPEN
    assert cluster.pm.get(three.id).leader == a


def test_all_reported_without_a_leader_stays_allocated(cluster, three) -> None:
    for dn in three.nodes:
        cluster.pm.process_pipeline_report(dn, three.id, is_leader=False)
    assert state(cluster, three) is ALLOCATED
    assert cluster.pm.get(three.id).leader is None
    cluster.pm.process_pipeline_report(three.nodes[2], three.id, is_leader=True)
    assert state(cluster, three) is OPEN
    assert cluster.pm.get(three.id).leader == three.nodes[2]


def test_repeated_reports_from_one_member_do_not_open(cluster, three) -> None:
    for _ in range(3):
        cluster.pm.process_pipeline_report(three.nodes[0], three.id, is_leader=True)
    assert state(cluster, three) is ALLOCATED


def test_factor_one_first_report_sets_the_leader_and_opens(cluster) -> None:
    (dn,) = cluster.add_nodes(1)
    one = cluster.pm.create_pipeline(RATIS_ONE)
    cluster.pm.process_pipeline_report(dn, one.id, is_leader=False)
    assert state(cluster, one) is OPEN
    assert cluster.pm.get(one.id).leader == dn


def test_leader_change_is_recorded(cluster, three) -> None:
    cluster.report_all(three, leader=three.nodes[0])
    cluster.pm.process_pipeline_report(three.nodes[1], three.id, is_leader=True)
    assert cluster.pm.get(three.id).leader == three.nodes[1]
    assert state(cluster, three) is OPEN


def test_safe_mode_report_of_open_pipeline_fires_open_pipeline(cluster, three) -> None:
    cluster.safe_mode = True
    cluster.report_all(three)
    assert cluster.events_of(SCMEvent.OPEN_PIPELINE)
    assert all(p.id == three.id and p.state is OPEN for p in cluster.events_of(SCMEvent.OPEN_PIPELINE))


def test_no_open_pipeline_event_out_of_safe_mode(cluster, three) -> None:
    cluster.report_all(three)
    assert cluster.events_of(SCMEvent.OPEN_PIPELINE) == []


def test_open_pipeline_explicitly_and_idempotently(cluster, three) -> None:
    cluster.clock.advance(5_000)
    cluster.pm.open_pipeline(three.id)
    opened = cluster.pm.get(three.id)
    assert opened.state is OPEN
    assert opened.state_entered_ms == cluster.clock.wall_ms()
    cluster.clock.advance(5_000)
    cluster.pm.open_pipeline(three.id)  # already OPEN: no-op
    assert cluster.pm.get(three.id).state_entered_ms == opened.state_entered_ms


# ------------------------------------------------------------------------------------------ OPEN <-> DORMANT
def test_open_dormant_round_trip(cluster, three) -> None:
    cluster.report_all(three)
    cluster.pm.deactivate_pipeline(three.id)
    assert state(cluster, three) is DORMANT
    cluster.pm.deactivate_pipeline(three.id)  # already DORMANT
    assert state(cluster, three) is DORMANT
    cluster.pm.activate_pipeline(three.id)
    assert state(cluster, three) is OPEN
    cluster.pm.activate_pipeline(three.id)
    assert state(cluster, three) is OPEN


def test_dormant_is_not_reopened_by_reports(cluster, three) -> None:
    cluster.report_all(three)
    cluster.pm.deactivate_pipeline(three.id)
    cluster.report_all(three)
    assert state(cluster, three) is DORMANT


def test_dormant_and_activate_refused_from_other_states(cluster, three) -> None:
    refused(cluster.pm.deactivate_pipeline, three.id)  # ALLOCATED
    refused(cluster.pm.activate_pipeline, three.id)
    cluster.pm.close_pipeline(three.id)
    refused(cluster.pm.deactivate_pipeline, three.id)
    refused(cluster.pm.activate_pipeline, three.id)


# ------------------------------------------------------------------------------------------------- -> CLOSED
@pytest.mark.parametrize("source", [ALLOCATED, OPEN, DORMANT])
def test_any_state_can_close(cluster, three, source: PipelineState) -> None:
    if source is not ALLOCATED:
        cluster.report_all(three)
    if source is DORMANT:
        cluster.pm.deactivate_pipeline(three.id)
    cluster.clock.advance(9_000)
    cluster.pm.close_pipeline(three.id)
    closed = cluster.pm.get(three.id)
    assert closed.state is CLOSED
    assert closed.state_entered_ms == cluster.clock.wall_ms()
    assert closed.created_ms == three.created_ms


def test_close_twice_is_a_no_op(cluster, three) -> None:
    cluster.pm.close_pipeline(three.id)
    entered = cluster.pm.get(three.id).state_entered_ms
    cluster.clock.advance(1_000)
    cluster.pm.close_pipeline(three.id)
    assert cluster.pm.get(three.id).state_entered_ms == entered


def test_closed_pipeline_cannot_be_opened(cluster, three) -> None:
    cluster.pm.close_pipeline(three.id)
    refused(cluster.pm.open_pipeline, three.id)
    cluster.report_all(three)
    assert state(cluster, three) is CLOSED


def test_close_fires_close_container_for_each_container(cluster, three) -> None:
    for cid in (7, 3, 12):
        cluster.pm.add_container_to_pipeline(three.id, cid)
    cluster.pm.close_pipeline(three.id)
    assert sorted(cluster.events_of(SCMEvent.CLOSE_CONTAINER)) == [3, 7, 12]
    assert cluster.pm.containers(three.id) == frozenset({3, 7, 12})


def test_containers_cannot_join_a_closed_pipeline_unless_forced(cluster, three) -> None:
    cluster.pm.close_pipeline(three.id)
    refused(cluster.pm.add_container_to_pipeline, three.id, 5)
    cluster.pm.add_container_to_pipeline(three.id, 5, force=True)
    assert 5 in cluster.pm.containers(three.id)


def test_remove_container_from_pipeline(cluster, three) -> None:
    cluster.pm.add_container_to_pipeline(three.id, 5)
    cluster.pm.remove_container_from_pipeline(three.id, 5)
    cluster.pm.close_pipeline(three.id)
    assert cluster.events_of(SCMEvent.CLOSE_CONTAINER) == []


# ---------------------------------------------------------------------------------------------------- delete
@pytest.mark.parametrize("source", [ALLOCATED, OPEN, DORMANT])
def test_delete_refused_unless_closed(cluster, three, source: PipelineState) -> None:
    if source is not ALLOCATED:
        cluster.report_all(three)
    if source is DORMANT:
        cluster.pm.deactivate_pipeline(three.id)
    refused(cluster.pm.delete_pipeline, three.id)
    assert state(cluster, three) is source


def test_delete_closed_sends_close_pipeline_to_each_member(cluster, three) -> None:
    drain(cluster)
    cluster.pm.close_pipeline(three.id)
    assert all(cluster.queued(dn) == [] for dn in cluster.ids)  # the live members close through the log
    cluster.pm.delete_pipeline(three.id)
    assert cluster.pm.find(three.id) is None
    with pytest.raises(SCMException) as err:
        cluster.pm.get(three.id)
    assert err.value.code is ResultCode.PIPELINE_NOT_FOUND
    for dn in cluster.ids:
        expected = [three.id] if dn in three.nodes else []
        assert [c.pipeline_id for c in cluster.queued(dn, CLOSE_CMD)] == expected
        assert three.id not in cluster.nm.pipelines(dn)
    assert cluster.pm.pipelines() == []


def test_close_and_delete(cluster, three) -> None:
    cluster.pm.close_and_delete(three.id)
    assert cluster.pm.find(three.id) is None
    assert all(len(cluster.queued(dn, CLOSE_CMD)) == 1 for dn in three.nodes)


def test_closing_a_failed_pipeline_tells_its_members_at_once_and_frees_their_slots(make_cluster) -> None:
    """Issue 28, defect 17: replicas stayed CLOSING for about 5 minutes after a pipeline failed, as SCM
    told the members nothing until the scrubber deleted the pipeline (66 s destroy timeout, 5-minute
    scrub) while the leader retried the close through its dead log. The close goes to every member with
    the close-container commands, at once, and a CLOSED pipeline holds none of its members' slots."""
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "1"})
    c.add_nodes(3)
    [failed], refusal = c.create_until_refusal()
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE  # every node at its limit of 1
    c.report_all(failed)
    c.pm.add_container_to_pipeline(failed.id, 4)
    drain(c)
    c.pm.process_pipeline_action(failed.nodes[0], failed.id, "the leader's log failed")  # no time passes
    for dn in failed.nodes:
        assert [cmd.pipeline_id for cmd in c.queued(dn, CLOSE_CMD)] == [failed.id]
    assert c.events_of(SCMEvent.CLOSE_CONTAINER) == [4]
    assert c.pm.find(failed.id) is not None  # the scrubber still deletes it later
    replacement = c.pm.create_pipeline(RATIS_THREE)
    assert set(replacement.nodes) == set(failed.nodes)


def test_closing_an_ec_pipeline_sends_no_datanode_command(cluster) -> None:
    cluster.add_nodes(5)
    pipeline = cluster.pm.create_pipeline(EC_3_2)
    cluster.pm.close_pipeline(pipeline.id, failed=True)
    assert all(cluster.queued(dn) == [] for dn in cluster.ids)  # datanodes never knew it


# -------------------------------------------------------------------------------- unknown pipelines, actions
def test_report_for_unknown_pipeline_gets_close_pipeline_command(cluster) -> None:
    a, b = cluster.add_nodes(2)
    cluster.pm.process_pipeline_report(a, UNKNOWN_PID, is_leader=True)
    assert [c.pipeline_id for c in cluster.queued(a, CLOSE_CMD)] == [UNKNOWN_PID]
    assert cluster.queued(b) == []


def test_report_after_deletion_gets_close_pipeline_command(cluster, three) -> None:
    cluster.pm.close_and_delete(three.id)
    drain(cluster)
    cluster.pm.process_pipeline_report(three.nodes[0], three.id, is_leader=False)
    assert len(cluster.queued(three.nodes[0], CLOSE_CMD)) == 1


def test_pipeline_action_close_closes_the_pipeline(cluster, three) -> None:
    cluster.report_all(three)
    cluster.pm.add_container_to_pipeline(three.id, 9)
    cluster.pm.process_pipeline_action(three.nodes[1], three.id, "Ratis group removed")
    assert state(cluster, three) is CLOSED
    assert cluster.events_of(SCMEvent.CLOSE_CONTAINER) == [9]


def test_pipeline_action_for_unknown_pipeline_gets_close_pipeline_command(cluster) -> None:
    (a,) = cluster.add_nodes(1)
    cluster.pm.process_pipeline_action(a, UNKNOWN_PID, "gone")
    assert [c.pipeline_id for c in cluster.queued(a, CLOSE_CMD)] == [UNKNOWN_PID]


# --------------------------------------------------------------------------------------------------- queries
def test_open_pipelines_honour_exclusions(cluster) -> None:
    cluster.add_nodes(6)
    made, _ = cluster.create_until_refusal()
    for p in made:
        cluster.report_all(p)
    first = made[0]
    assert {p.id for p in cluster.pm.open_pipelines(RATIS_THREE)} == {p.id for p in made}
    without_first = cluster.pm.open_pipelines(RATIS_THREE, excluded_pipelines=frozenset({first.id}))
    assert first.id not in {p.id for p in without_first}
    avoiding = cluster.pm.open_pipelines(RATIS_THREE, excluded_nodes=frozenset({first.nodes[0]}))
    assert all(first.nodes[0] not in p.nodes for p in avoiding)


def test_counts_and_node_membership(cluster) -> None:
    cluster.add_nodes(6)
    made, _ = cluster.create_until_refusal()
    cluster.report_all(made[0])
    cluster.pm.close_pipeline(made[1].id)
    assert cluster.pm.count(RATIS_THREE) == len(made) - 1
    assert cluster.pm.count(RATIS_THREE, [CLOSED]) == 1
    assert cluster.pm.count(RATIS_THREE, [OPEN]) == 1
    for dn in cluster.ids:
        mine = {p.id for p in made if dn in p.nodes}
        assert {p.id for p in cluster.pm.pipelines_of_node(dn)} == mine
        assert cluster.pm.ratis_three_count(dn) == len(mine - {made[1].id})
