"""Pipeline creation under the limits (RatisPipelineProvider, Ozone's "Calculating Ratis Pipeline Limits" doc)
and what creation sends to datanodes."""

from __future__ import annotations

import uuid

import pytest

from pyozone.hdds.commands import CreatePipelineCommand
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import PipelineState, ReplicationType, SCMCommandType
from pyozone.scm.ha.context import ScmContext

LIMIT_MSG = (
    "Cannot create pipeline as it would exceed the limit per datanode: {} replicationConfig: RATIS/THREE"
)
SEED_000 = {
    "ozone.scm.datanode.pipeline.limit": "0",
    "ozone.scm.pipeline.per.metadata.disk": "2",
    "ozone.scm.ratis.pipeline.limit": "30",
}


def assert_within_node_limits(cluster) -> None:
    counts = cluster.three_counts()
    for dn in cluster.ids:
        assert counts[dn] <= cluster.nm.pipeline_limit(dn), dn


# ----------------------------------------------------------------------------------------------- fixed limit
@pytest.mark.parametrize(("L", "expected"), [(1, 3), (2, 6)])
def test_fixed_limit_ten_healthy_nodes(make_cluster, L: int, expected: int) -> None:
    """SCMT TestRatisPipelineProvider: 10 healthy nodes, L=1 -> 3 pipelines, L=2 -> 6, then refusal."""
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": str(L)})
    c.add_nodes(10)
    made, refusal = c.create_until_refusal()
    assert len(made) == expected
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert refusal.args[0] == LIMIT_MSG.format(L)
    assert_within_node_limits(c)
    assert all(p.state is PipelineState.ALLOCATED for p in made)


@pytest.mark.parametrize("healthy", range(3, 13))
def test_default_limit_is_floor_two_thirds_of_healthy_nodes(make_cluster, healthy: int) -> None:
    c = make_cluster()  # ozone.scm.datanode.pipeline.limit defaults to 2
    c.add_nodes(healthy)
    c.add(op_state=Op.DECOMMISSIONING)  # registered but not IN_SERVICE: not counted, never chosen
    made, refusal = c.create_until_refusal()
    assert len(made) == 2 * healthy // 3
    assert refusal.args[0] == LIMIT_MSG.format(2)
    assert_within_node_limits(c)


def test_fixed_limit_counts_only_in_service_healthy_nodes(make_cluster) -> None:
    c = make_cluster()
    nodes = c.add_nodes(10)
    c.make_stale(nodes[0])
    c.nm.set_operational_state(nodes[1], Op.ENTERING_MAINTENANCE)
    made, refusal = c.create_until_refusal()
    assert len(made) == 2 * 8 // 3  # H = 8
    assert refusal.args[0] == LIMIT_MSG.format(2)


def test_fixed_limit_ignores_the_global_limit(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "2", "ozone.scm.ratis.pipeline.limit": "1"})
    c.add_nodes(6)
    made, _ = c.create_until_refusal()
    assert len(made) == 4


def test_allocated_open_and_dormant_count_closed_does_not(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "1"})
    c.add_nodes(9)
    made, _ = c.create_until_refusal()
    assert len(made) == 3  # every node is in one pipeline
    c.report_all(made[0])
    c.report_all(made[1])
    c.pm.deactivate_pipeline(made[1].id)
    assert [c.pm.get(p.id).state for p in made] == [
        PipelineState.OPEN,
        PipelineState.DORMANT,
        PipelineState.ALLOCATED,
    ]
    with pytest.raises(SCMException):
        c.pm.create_pipeline(RATIS_THREE)
    c.pm.close_pipeline(made[1].id)
    replacement = c.pm.create_pipeline(RATIS_THREE)
    assert set(replacement.nodes) == set(made[1].nodes)  # the only nodes below their limit of 1
    with pytest.raises(SCMException):
        c.pm.create_pipeline(RATIS_THREE)


# ----------------------------------------------------------------------- Calculating Ratis Pipeline Limits
def seed_000_cluster(make_cluster, seed: int = 7):
    c = make_cluster(SEED_000, seed=seed)
    c.add_nodes(10, metadata_volumes=[4] * 8 + [2] * 2)
    return c


@pytest.mark.parametrize("seed", [1, 7, 42, 2024])
def test_seed_000_dynamic_limit_gives_24_pipelines(make_cluster, seed: int) -> None:
    c = seed_000_cluster(make_cluster, seed)
    assert [c.nm.pipeline_limit(dn) for dn in c.ids] == [8] * 8 + [4] * 2  # 72 slots
    made, refusal = c.create_until_refusal()
    assert len(made) == 24  # min(72 // 3, 30)
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    counts = c.three_counts()
    assert [counts[dn] for dn in c.ids] == [8] * 8 + [4] * 2  # every slot used, none exceeded
    assert all(len(set(p.nodes)) == 3 for p in made)


@pytest.mark.parametrize("seed", [1, 7, 42])
def test_seed_000_with_ratis_one_pipelines_global_cap_leaves_20(make_cluster, seed: int) -> None:
    c = seed_000_cluster(make_cluster, seed)
    ones, one_refusal = c.create_until_refusal(RATIS_ONE)
    assert len(ones) == 10  # one per node
    assert one_refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert sorted(p.nodes[0] for p in ones) == sorted(c.ids)
    made, refusal = c.create_until_refusal()
    assert len(made) == 30 - 10
    assert refusal.args[0] == LIMIT_MSG.format(30)
    assert_within_node_limits(c)


def test_closed_ratis_one_pipelines_still_count_against_the_global_cap(make_cluster) -> None:
    c = seed_000_cluster(make_cluster)
    ones, _ = c.create_until_refusal(RATIS_ONE)
    for p in ones[:4]:
        c.pm.close_pipeline(p.id)
    made, refusal = c.create_until_refusal()
    assert len(made) == 20  # 30 - 10 RATIS/ONE in any state
    assert refusal.args[0] == LIMIT_MSG.format(30)


def test_global_cap_below_node_slots(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "0", "ozone.scm.ratis.pipeline.limit": "5"})
    c.add_nodes(9, metadata_volumes=4)  # 9 x 8 slots = 24 pipelines by slots
    made, refusal = c.create_until_refusal()
    assert len(made) == 5
    assert refusal.args[0] == LIMIT_MSG.format(5)


def test_no_cluster_limit_node_slots_bound_the_count(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "0", "ozone.scm.ratis.pipeline.limit": "0"})
    c.add_nodes(6, metadata_volumes=1)  # limit 2 each: 12 slots -> 4 pipelines
    made, refusal = c.create_until_refusal()
    assert len(made) == 4
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert "exceed the limit" not in refusal.args[0]  # refused by placement, not by a cluster limit
    assert [c.three_counts()[dn] for dn in c.ids] == [2] * 6


def test_ratis_one_pipelines_do_not_use_per_node_three_slots(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "1"})
    c.add_nodes(3)
    c.create_until_refusal(RATIS_ONE)
    three = c.pm.create_pipeline(RATIS_THREE)
    assert sorted(three.nodes) == sorted(c.ids)


# --------------------------------------------------------------------------------------------- creation gate
def test_ratis_three_refused_until_safe_mode_precheck_passes(cluster) -> None:
    cluster.add_nodes(5)
    cluster.precheck = False
    with pytest.raises(SCMException) as err:
        cluster.pm.create_pipeline(RATIS_THREE)
    assert err.value.code is ResultCode.SAFE_MODE_EXCEPTION
    assert cluster.pm.pipelines() == []
    one = cluster.pm.create_pipeline(RATIS_ONE)  # factor ONE bypasses the pre-check gate
    assert one.replication_config == RATIS_ONE
    cluster.precheck = True
    assert cluster.pm.create_pipeline(RATIS_THREE).replication_config == RATIS_THREE


def test_frozen_creation_is_refused(cluster) -> None:
    cluster.add_nodes(5)
    cluster.pm.frozen = True
    for config in (RATIS_ONE, RATIS_THREE):
        with pytest.raises(SCMException):
            cluster.pm.create_pipeline(config)


def test_standalone_creation_is_refused(cluster) -> None:
    cluster.add_nodes(5)
    with pytest.raises(SCMException):
        cluster.pm.create_pipeline(ReplicationConfig(ReplicationType.STAND_ALONE, 3))


# ------------------------------------------------------------------------------------ commands, leaders, ids
def test_create_pipeline_command_goes_to_every_member(cluster) -> None:
    cluster.add_nodes(5)
    cluster.nm.context = ScmContext.ha_leader(4)
    p = cluster.pm.create_pipeline(RATIS_THREE)
    assert p.state is PipelineState.ALLOCATED
    assert p.created_ms == p.state_entered_ms == cluster.clock.wall_ms()
    assert p.suggested_leader in p.nodes
    for dn in cluster.ids:
        cmds = cluster.queued(dn, SCMCommandType.createPipelineCommand)
        if dn not in p.nodes:
            assert cmds == []
            continue
        assert len(cmds) == 1
        assert cmds[0] == CreatePipelineCommand(
            pipeline_id=p.id,
            replication_type=ReplicationType.RATIS,
            factor=3,
            nodes=p.nodes,
            suggested_leader=p.suggested_leader,
            term=4,
            id=cmds[0].id,
        )
    for dn in p.nodes:
        assert p.id in cluster.nm.pipelines(dn)


def test_ratis_one_command_and_leader(cluster) -> None:
    (dn,) = cluster.add_nodes(1)
    p = cluster.pm.create_pipeline(RATIS_ONE)
    assert p.nodes == (dn,)
    assert p.suggested_leader == dn
    (cmd,) = cluster.queued(dn, SCMCommandType.createPipelineCommand)
    assert cmd.factor == 1


def test_suggested_leaders_spread_over_members(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "3"})
    c.add_nodes(3)
    made, _ = c.create_until_refusal()
    assert len(made) == 3
    assert sorted(p.suggested_leader for p in made) == sorted(c.ids)  # MinLeaderCount: one each


def test_leader_counts_ignore_closed_pipelines(make_cluster) -> None:
    """MinLeaderCountChoosePolicy counts a node's suggested-leader roles in pipelines that are not CLOSED."""
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "2"}, seed=3)
    c.add_nodes(3)

    def active_leader_count(dn: str) -> int:
        return sum(
            1 for p in c.pm.pipelines() if p.state is not PipelineState.CLOSED and p.suggested_leader == dn
        )

    for round_ in range(12):
        live = [p for p in c.pm.pipelines(RATIS_THREE) if not p.is_closed()]
        if len(live) == 2:
            c.pm.close_pipeline(live[round_ % 2].id)
        expected = min(active_leader_count(dn) for dn in c.ids)
        p = c.pm.create_pipeline(RATIS_THREE)
        assert active_leader_count(p.suggested_leader) - 1 == expected, round_


def test_ratis_one_one_per_node(cluster) -> None:
    cluster.add_nodes(4)
    made, refusal = cluster.create_until_refusal(RATIS_ONE)
    assert sorted(p.nodes[0] for p in made) == sorted(cluster.ids)
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    cluster.pm.close_pipeline(made[0].id)  # a CLOSED RATIS/ONE pipeline frees its node
    again = cluster.pm.create_pipeline(RATIS_ONE)
    assert again.nodes == made[0].nodes


def test_ratis_one_skips_excluded_unhealthy_and_spaceless_nodes(cluster, build) -> None:
    good = cluster.add()
    excluded = cluster.add()
    cluster.add(build.node_report(data_remaining=1 * build.GB))
    cluster.add(build.node_report(metadata_remaining=build.GB))
    cluster.add(op_state=Op.DECOMMISSIONED)
    made, _ = cluster.create_until_refusal(RATIS_ONE, excluded_nodes=[excluded])
    assert [p.nodes for p in made] == [(good,)]


def test_ids_are_deterministic_for_a_seed(make_cluster) -> None:
    def run(seed: int) -> list[tuple[str, tuple[str, ...], str | None]]:
        c = make_cluster({"ozone.scm.datanode.pipeline.limit": "3"}, seed=seed)
        c.add_nodes(9)
        made, _ = c.create_until_refusal()
        made += c.create_until_refusal(RATIS_ONE)[0]
        return [(p.id, p.nodes, p.suggested_leader) for p in made]

    first = run(11)
    assert first == run(11)
    assert [i for i, _, _ in first] != [i for i, _, _ in run(12)]
    ids = [i for i, _, _ in first]
    assert len(set(ids)) == len(ids)
    assert all(uuid.UUID(i).version == 4 for i in ids)
