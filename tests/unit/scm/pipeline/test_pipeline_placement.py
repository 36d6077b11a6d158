"""Node selection for RATIS/THREE pipelines (Ozone's PipelinePlacementPolicy) and the space check."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pyozone.hdds.datanode import DatanodeInfo, LayoutVersion, NodeReport
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.pipeline.placement import MULTIPLE_RACK_PIPELINE_MSG, choose_leader

NO_CLUSTER_LIMIT = {"ozone.scm.datanode.pipeline.limit": "0", "ozone.scm.ratis.pipeline.limit": "0"}


def racks_of(cluster, pipeline) -> set[str]:
    return {cluster.rack(dn) for dn in pipeline.nodes}


# ---------------------------------------------------------------------------------------- space
def test_space_check_boundaries(cluster, build) -> None:
    GB = build.GB
    has_space = cluster.pm.placement.has_enough_space

    def info(report):
        return cluster.nm.node(cluster.add(report))

    assert has_space(info(build.node_report()))
    assert has_space(info(build.node_report(data_remaining=5 * GB + 1)))
    assert not has_space(info(build.node_report(data_remaining=5 * GB)))  # Ozone: usable must exceed it
    assert not has_space(info(build.node_report(metadata_remaining=GB)))  # metadata needs more than 1GB
    assert has_space(info(build.node_report(metadata_remaining=GB + 1)))
    assert not has_space(info(build.node_report(data_volumes=0, failed_data_volumes=2)))  # failed volumes
    assert not has_space(info(build.node_report(metadata_volumes=0)))
    assert not has_space(info(build.node_report(data_volumes=0)))


def test_the_floor_and_committed_bytes_leave_no_room_for_a_container(cluster, build) -> None:
    """Issue 28, defect 16: a volume with bytes left but under the datanode's free-space floor (or
    promised to its open containers) takes no container: usable = remaining - committed - floor."""
    GB, has_space = build.GB, cluster.pm.placement.has_enough_space

    def info(committed: int = 0, spare: int = 0) -> DatanodeInfo:
        storage = replace(build.volume("d0", 30 * GB), committed=committed, free_space_to_spare=spare)
        return cluster.nm.node(cluster.add(NodeReport((storage,), (build.volume("m0", 50 * GB),))))

    assert has_space(info(spare=20 * GB, committed=5 * GB - 1))
    assert not has_space(info(spare=20 * GB, committed=5 * GB))
    assert not has_space(info(spare=25 * GB))
    assert not has_space(info(committed=25 * GB))
    assert not has_space(info(spare=40 * GB))  # below the floor: negative usable space


def test_a_node_out_of_space_gets_no_pipeline_until_it_reports_space(make_cluster, build) -> None:
    """Issue 28, defect 16: SCM built a pipeline on a full datanode every 10 s. Its node report (under
    its floor) keeps it out of placement; a report with space brings it back."""
    c = make_cluster(NO_CLUSTER_LIMIT)
    roomy = c.add_nodes(3)
    full_volume = replace(build.volume("d0", 20 * build.GB), free_space_to_spare=20 * build.GB)
    full = c.add(NodeReport((full_volume,), (build.volume("m0", 50 * build.GB),)))
    made, refusal = c.create_until_refusal()
    assert made and all(set(p.nodes) == set(roomy) for p in made)
    assert full not in c.three_counts() and refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    c.nm.process_node_report(full, build.node_report())
    assert c.pm.placement.filter_viable_nodes((), required=1) == [full]  # the others are at their limit


def test_one_roomy_volume_is_enough(cluster, build) -> None:
    report = build.node_report(data_volumes=0, metadata_volumes=0)
    report = type(report)(
        storage=(build.volume("small", 1 * build.GB), build.volume("big", 10 * build.GB)),
        metadata_storage=(build.volume("m-small", build.GB // 2), build.volume("m-big", 2 * build.GB)),
    )
    assert cluster.pm.placement.has_enough_space(cluster.nm.node(cluster.add(report)))


def test_container_size_setting_drives_the_data_check(make_cluster, build) -> None:
    c = make_cluster({"ozone.scm.container.size": "1GB"})
    dn = c.add(build.node_report(data_remaining=2 * build.GB))
    assert c.pm.placement.has_enough_space(c.nm.node(dn))


# ---------------------------------------------------------------------------------------- ineligible nodes
def test_placement_never_uses_ineligible_nodes(make_cluster, build) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "10"})
    good = c.add_nodes(3)
    GB = build.GB
    stale, dead, readonly = c.add(), c.add(), c.add()
    decommissioning = c.add(op_state=Op.DECOMMISSIONING)
    maintenance = c.add(op_state=Op.IN_MAINTENANCE)
    no_data_space = c.add(build.node_report(data_remaining=4 * GB))
    no_metadata_space = c.add(build.node_report(metadata_remaining=GB))
    only_failed_volumes = c.add(build.node_report(data_volumes=0, failed_data_volumes=3))
    excluded = c.add()
    c.make_dead(dead)
    c.run(5 * 60_000 + 3_000, silent=[dead, stale])
    c.nm.process_heartbeat(readonly, layout=LayoutVersion(0, 1))
    c.nm.check_health()
    health = {dn: c.nm.node(dn).status.health.name for dn in (stale, dead, readonly)}
    assert health == {stale: "STALE", dead: "DEAD", readonly: "HEALTHY_READONLY"}
    bad = {stale, dead, readonly, decommissioning, maintenance, no_data_space, no_metadata_space}
    bad |= {only_failed_volumes, excluded}
    made, refusal = c.create_until_refusal(excluded_nodes=[excluded])
    assert len(made) == 10  # the three good nodes, each at its limit of 10
    assert all(set(p.nodes) == set(good) for p in made)
    assert not bad & set(c.three_counts())
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE


def test_no_healthy_nodes(make_cluster) -> None:
    c = make_cluster(NO_CLUSTER_LIMIT)
    nodes = c.add_nodes(4)
    c.make_stale(*nodes)
    with pytest.raises(SCMException) as err:
        c.pm.create_pipeline(RATIS_THREE)
    assert err.value.code is ResultCode.FAILED_TO_FIND_HEALTHY_NODES


def test_too_few_nodes_with_space(make_cluster, build) -> None:
    c = make_cluster(NO_CLUSTER_LIMIT)
    c.add_nodes(2)
    c.add(build.node_report(data_remaining=build.GB))
    with pytest.raises(SCMException) as err:
        c.pm.create_pipeline(RATIS_THREE)
    assert err.value.code is ResultCode.FAILED_TO_FIND_NODES_WITH_SPACE


def test_too_few_nodes_after_exclusion(make_cluster) -> None:
    c = make_cluster(NO_CLUSTER_LIMIT)
    nodes = c.add_nodes(4)
    with pytest.raises(SCMException) as err:
        c.pm.create_pipeline(RATIS_THREE, excluded_nodes=nodes[:2])
    assert err.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    p = c.pm.create_pipeline(RATIS_THREE, excluded_nodes=nodes[:1])
    assert set(p.nodes) == set(nodes[1:])


def test_nodes_at_their_limit_are_not_candidates(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "0"})
    small = c.add_nodes(2, metadata_volumes=1)  # limit 2
    big = c.add_nodes(4, metadata_volumes=2)  # limit 4
    made, _ = c.create_until_refusal()
    counts = c.three_counts()
    assert all(counts[dn] <= 2 for dn in small)
    assert all(counts[dn] <= 4 for dn in big)
    assert len(made) == (2 * 2 + 4 * 4) // 3  # 20 slots: 6 pipelines


def test_least_loaded_nodes_are_chosen_first(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "10"})
    c.add_nodes(6)
    for n in range(1, 9):
        c.pm.create_pipeline(RATIS_THREE)
        counts = [c.three_counts()[dn] for dn in c.ids]
        assert max(counts) - min(counts) <= 1, (n, counts)


def test_members_are_distinct(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "4"})
    c.add_nodes(5)
    made, _ = c.create_until_refusal()
    assert made
    assert all(len(set(p.nodes)) == 3 for p in made)


# ---------------------------------------------------------------------------------------- racks
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_two_racks_every_pipeline_spans_exactly_two(make_cluster, seed: int) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "3"}, racks=["/r1"] * 4 + ["/r2"] * 4, seed=seed)
    c.add_nodes(8)
    made, _ = c.create_until_refusal()
    assert len(made) == 8
    assert all(len(racks_of(c, p)) == 2 for p in made)


@pytest.mark.parametrize("seed", range(10))
def test_third_node_falls_back_to_the_second_nodes_rack(make_cluster, seed: int) -> None:
    """Anchor alone on its rack: the third member comes from the second member's rack, so still two racks."""
    racks = ["/r2"] * 3 + ["/r3"] * 3 + ["/lonely"]
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "10"}, racks=racks, seed=seed)
    c.add_nodes(7)
    for _ in range(10):  # every node stays far below its limit of 10
        p = c.pm.create_pipeline(RATIS_THREE)
        assert len(racks_of(c, p)) == 2, [c.rack(dn) for dn in p.nodes]


def test_multi_rack_cluster_with_all_candidates_on_one_rack_is_an_error(make_cluster) -> None:
    c = make_cluster(NO_CLUSTER_LIMIT, racks=["/r1"] * 3 + ["/r2"] * 3)
    r1 = c.add_nodes(3, metadata_volumes=4)  # 8 slots each
    c.add_nodes(3, metadata_volumes=1)  # 2 slots each, soon full
    made, refusal = c.create_until_refusal()
    assert all(len(racks_of(c, p)) == 2 for p in made)
    assert refusal.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert refusal.args[0] == MULTIPLE_RACK_PIPELINE_MSG
    assert all(c.three_counts()[dn] < 8 for dn in r1)  # r1 still had room


def test_excluding_the_other_rack_is_an_error(make_cluster) -> None:
    c = make_cluster(racks=["/r1"] * 4 + ["/r2"] * 2)
    nodes = c.add_nodes(6)
    with pytest.raises(SCMException) as err:
        c.pm.create_pipeline(RATIS_THREE, excluded_nodes=nodes[4:])
    assert err.value.args[0] == MULTIPLE_RACK_PIPELINE_MSG


@pytest.mark.parametrize("how", ["decommissioning", "stale", "no_space"])
def test_rack_without_eligible_nodes_does_not_block_creation(make_cluster, build, how: str) -> None:
    """'Multiple racks' is judged on the healthy in-service nodes with space (PipelinePlacementPolicy)."""
    c = make_cluster(racks=["/r1"] * 4 + ["/r2"] * 2)
    r1 = c.add_nodes(4)
    if how == "no_space":
        r2 = [c.add(build.node_report(data_remaining=build.GB)) for _ in range(2)]
    else:
        r2 = c.add_nodes(2)
    if how == "decommissioning":
        for dn in r2:
            c.nm.set_operational_state(dn, Op.DECOMMISSIONING)
    elif how == "stale":
        c.make_stale(*r2)
    p = c.pm.create_pipeline(RATIS_THREE)
    assert set(p.nodes) <= set(r1)


def test_single_rack_cluster_places_anywhere(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "2"}, racks=["/only"] * 6)
    c.add_nodes(6)
    made, _ = c.create_until_refusal()
    assert len(made) == 4
    assert all(racks_of(c, p) == {"/only"} for p in made)


# ---------------------------------------------------------------------------------------- disallow same peers
def test_disallow_same_peers_never_repeats_a_peer_pair(make_cluster) -> None:
    c = make_cluster(
        {"ozone.scm.datanode.pipeline.limit": "2", "ozone.scm.datanode.disallow.same.peers": "true"}
    )
    c.add_nodes(9)
    made, _ = c.create_until_refusal()
    assert made
    pairs = [frozenset((a, b)) for p in made for a in p.nodes for b in p.nodes if a < b]
    assert len(pairs) == len(set(pairs))


@pytest.mark.parametrize(
    ("disallow", "limit", "active"),
    [("true", "2", True), ("true", "0", True), ("true", "1", False), ("false", "2", False)],
)
def test_disallow_same_peers_only_when_the_limit_is_not_one(make_cluster, disallow, limit, active) -> None:
    c = make_cluster(
        {"ozone.scm.datanode.disallow.same.peers": disallow, "ozone.scm.datanode.pipeline.limit": limit}
    )
    assert bool(c.pm.placement.disallow_same_peers) is active


@pytest.mark.parametrize("seed", range(6))
def test_disallow_same_peers_applies_to_rack_aware_picks(make_cluster, seed: int) -> None:
    c = make_cluster(
        {"ozone.scm.datanode.pipeline.limit": "3", "ozone.scm.datanode.disallow.same.peers": "true"},
        racks=["/r1"] * 5 + ["/r2"] * 5,
        seed=seed,
    )
    c.add_nodes(10)
    made, _ = c.create_until_refusal()
    assert made
    pairs = [frozenset((a, b)) for p in made for a in p.nodes for b in p.nodes if a < b]
    assert len(pairs) == len(set(pairs))


# ---------------------------------------------------------------------------------------- leader policy
def test_choose_leader_takes_the_member_with_fewest_leader_roles() -> None:
    counts = {"a": 2, "b": 0, "c": 1}
    assert choose_leader(["a", "b", "c"], counts.__getitem__) == "b"
