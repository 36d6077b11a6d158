"""Target selection (ReplicationManagerUtil on SCMContainerPlacementRackAware's choose, rack scatter
for EC)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pyozone.hdds.datanode import NodeReport, required_replication_space
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.placement import PlacementPolicy
from pyozone.scm.replication.targets import (
    choose_datanodes,
    get_excluded_and_used_nodes,
    get_target_datanodes,
)
from tests.builders import GB
from tests.unit.scm.replication.processing.rmp_fakes import (
    USED,
    FakeContext,
    FakeNodeManager,
    Op,
    container,
    dn,
    ec,
    pending_op,
    replica,
)

RACK_AWARE, SCATTER = PlacementPolicy.RACK_AWARE, PlacementPolicy.RACK_SCATTER
ADD, DELETE = PendingOpType.ADD, PendingOpType.DELETE
SEEDS = range(40)


def nodes_on(racks: dict[str, int]) -> FakeNodeManager:
    """{rack: node count}; nodes numbered from 1 in rack order."""
    nodes = FakeNodeManager()
    i = 0
    for rack, count in racks.items():
        for _ in range(count):
            i += 1
            nodes.add(dn(i), rack)
    return nodes


def rack_of(nodes: FakeNodeManager):
    def lookup(node):
        info = nodes.get(node)
        return None if info is None or info.status.is_dead() else info.details.network_location

    return lookup


def choose(nodes, used=(), excluded=(), required=1, seed=0, policy=RACK_AWARE, size=GB):
    return choose_datanodes(
        policy, nodes.nodes(), rack_of(nodes), used, excluded, required, size, random.Random(seed)
    )


def racks(nodes, chosen):
    return [nodes.get(d).details.network_location for d in chosen]


# ------------------------------------------------------------------ rack aware choose
def test_a_new_set_puts_the_second_node_on_the_first_rack_and_the_third_elsewhere() -> None:
    nodes = nodes_on({"/a": 3, "/b": 3, "/c": 3})
    for seed in SEEDS:
        chosen = choose(nodes, required=3, seed=seed)
        r = racks(nodes, chosen)
        assert len(set(chosen)) == 3
        assert r[0] == r[1] != r[2]


def test_one_used_node_gets_a_same_rack_partner_then_other_racks() -> None:
    nodes = nodes_on({"/a": 3, "/b": 3, "/c": 3})
    for seed in SEEDS:
        chosen = choose(nodes, used=[dn(1)], required=2, seed=seed)
        assert racks(nodes, chosen)[0] == "/a" and racks(nodes, chosen)[1] != "/a"
        assert dn(1) not in chosen


def test_two_used_nodes_on_one_rack_send_every_new_node_elsewhere() -> None:
    nodes = nodes_on({"/a": 3, "/b": 3, "/c": 3})
    for seed in SEEDS:
        chosen = choose(nodes, used=[dn(1), dn(2)], required=1, seed=seed)
        assert racks(nodes, chosen) != ["/a"]


def test_two_used_nodes_on_different_racks_get_one_new_node_on_a_used_rack() -> None:
    nodes = nodes_on({"/a": 3, "/b": 3, "/c": 3})
    for seed in SEEDS:
        chosen = choose(nodes, used=[dn(1), dn(4)], required=2, seed=seed)
        assert racks(nodes, chosen)[0] in ("/a", "/b")
        assert racks(nodes, chosen)[1] == "/c"


def test_fallback_drops_the_rack_constraints_when_nothing_else_fits() -> None:
    nodes = nodes_on({"/a": 4})
    assert sorted(choose(nodes, used=[dn(1), dn(2)], required=2)) == [dn(3), dn(4)]


def test_excluded_used_leaving_and_unwritable_nodes_are_never_chosen() -> None:
    nodes = nodes_on({"/a": 4, "/b": 4})
    nodes.set_state(dn(2), op=Op.DECOMMISSIONING)
    nodes.set_state(dn(3), op=Op.IN_MAINTENANCE)
    nodes.set_state(dn(5), health=NodeState.STALE)
    nodes.set_state(dn(6), health=NodeState.HEALTHY_READONLY)
    nodes.set_state(dn(7), health=NodeState.DEAD)  # out of the topology
    nodes.add(dn(9), "/a", remaining=GB)  # too small for 2 x 1GB
    allowed = {dn(4), dn(8)}
    for seed in SEEDS:
        try:
            chosen = choose(nodes, used=[dn(1)], excluded=[], required=2, seed=seed, size=2 * GB)
        except SCMException:
            continue  # three rejections in a row: allowed by 11.2
        assert set(chosen) <= allowed


def test_three_rejections_end_a_choose() -> None:
    nodes = nodes_on({"/a": 10})
    for i in range(2, 11):
        nodes.set_state(dn(i), health=NodeState.STALE)
    outcomes = set()
    for seed in SEEDS:
        try:
            outcomes.add(tuple(choose(nodes, required=1, seed=seed)))
        except SCMException:
            outcomes.add("failed")
    assert outcomes == {(dn(1),), "failed"}


def test_the_topology_must_have_a_leaf_for_every_required_used_and_excluded_node() -> None:
    nodes = nodes_on({"/a": 2, "/b": 2})
    with pytest.raises(SCMException):
        choose(nodes, used=[dn(1), dn(2)], excluded=[dn(3)], required=2)
    assert choose(nodes, used=[dn(1), dn(2)], excluded=[dn(3)], required=1) == [dn(4)]


# ------------------------------------------------------------------ scatter (EC)
def test_scatter_picks_the_racks_holding_fewest_replicas() -> None:
    nodes = nodes_on({"/a": 2, "/b": 2, "/c": 2, "/d": 2})
    used = [dn(1), dn(3), dn(5)]  # one each on a, b, c
    for seed in SEEDS:
        chosen = choose(nodes, used=used, required=2, seed=seed, policy=SCATTER)
        assert racks(nodes, chosen)[0] == "/d"
        assert racks(nodes, chosen)[1] in ("/a", "/b", "/c", "/d")
        assert not set(chosen) & set(used)


# ------------------------------------------------------------------ getTargetDatanodes
def test_size_required_is_twice_the_larger_of_used_bytes_and_container_size() -> None:
    assert required_replication_space(3) == 6
    nodes = FakeNodeManager()
    nodes.add(dn(1), "/a", remaining=10 * GB)  # usable space must exceed it (hasEnoughSpace)
    nodes.add(dn(2), "/a", remaining=10 * GB + 1)
    c = container(used=USED)  # 1GB used, 5GB configured: 10GB needed
    chosen = get_target_datanodes(
        RACK_AWARE, nodes.nodes(), rack_of(nodes), 1, [], [], c, 5 * GB, random.Random()
    )
    assert chosen == [dn(2)]
    big = container(used=6 * GB)
    with pytest.raises(SCMException) as e:
        get_target_datanodes(
            RACK_AWARE, nodes.nodes(), rack_of(nodes), 1, [], [], big, 5 * GB, random.Random()
        )
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE


def test_retries_with_fewer_nodes_down_to_one() -> None:
    nodes = nodes_on({"/a": 2, "/b": 2})
    rng = random.Random(3)
    chosen = get_target_datanodes(
        RACK_AWARE, nodes.nodes(), rack_of(nodes), 3, [dn(1), dn(3)], [], container(), GB, rng
    )
    assert sorted(chosen) == [dn(2), dn(4)]
    with pytest.raises(SCMException) as e:
        get_target_datanodes(
            RACK_AWARE,
            nodes.nodes(),
            rack_of(nodes),
            2,
            [dn(1), dn(2), dn(3), dn(4)],
            [],
            container(),
            GB,
            rng,
        )
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE


# ------------------------------------------------------------------ getExcludedAndUsedNodes
def excluded_and_used(ctx: FakeContext, c, replicas, to_be_removed=(), ops=()):
    result = get_excluded_and_used_nodes(
        c,
        replicas,
        to_be_removed,
        ops,
        ctx.node_status,
        ctx.candidate_nodes(),
        ctx.pending_ops.scheduled_size,
    )
    return set(result.excluded), set(result.used)


def test_excluded_and_used_rules() -> None:
    ctx = FakeContext()
    for i in range(1, 10):
        ctx.nodes.add(dn(i))
    ctx.nodes.set_state(dn(3), op=Op.DECOMMISSIONING)
    ctx.nodes.set_state(dn(4), op=Op.IN_MAINTENANCE, health=NodeState.DEAD)
    ctx.nodes.set_state(dn(5), op=Op.IN_MAINTENANCE)
    replicas = [
        replica(dn(1)),
        replica(dn(2), "UNHEALTHY"),
        replica(dn(3)),
        replica(dn(4)),
        replica(dn(5)),
        replica(dn(6)),
        replica(dn(99)),  # unknown node
    ]
    ops = [pending_op(ADD, dn(7)), pending_op(DELETE, dn(8))]
    excluded, used = excluded_and_used(ctx, container(), replicas, {replicas[5]}, ops)
    assert excluded == {dn(2), dn(3), dn(6), dn(8), dn(99)}
    assert used == {dn(1), dn(5), dn(7)}


def test_a_quasi_closed_containers_unique_origin_unhealthy_copy_is_used() -> None:
    ctx = FakeContext()
    for i in range(1, 6):
        ctx.nodes.add(dn(i))
    qc = container("QUASI_CLOSED")
    replicas = [
        replica(dn(1), "QUASI_CLOSED", origin=dn(1)),
        replica(dn(2), "QUASI_CLOSED", origin=dn(2)),
        replica(dn(3), "UNHEALTHY", origin=dn(3)),  # unique origin: kept
        replica(dn(4), "UNHEALTHY", origin=dn(1)),  # origin dn(1) survives: deletable
    ]
    excluded, used = excluded_and_used(ctx, qc, replicas)
    assert excluded == {dn(4)}
    assert used == {dn(1), dn(2), dn(3)}


def test_nodes_too_full_for_what_is_already_scheduled_are_excluded() -> None:
    ctx = FakeContext()
    ctx.nodes.add(dn(1), remaining=10 * GB)
    ctx.nodes.add(dn(2), remaining=10 * GB)
    ctx.nodes.add(dn(3), remaining=10 * GB)
    deadline = ctx.clock.wall_ms() + 1
    ctx.pending_ops.schedule_add(9, dn(1), 0, None, deadline, 9 * GB)  # 1GB left < 2 x 1GB
    ctx.pending_ops.schedule_add(9, dn(2), 0, None, deadline, 8 * GB)  # 2GB left: fits
    assert excluded_and_used(ctx, container(used=GB), [])[0] == {dn(1)}
    ctx.clock.advance(ctx.config.event_timeout_ms + 1)  # stale schedules no longer count
    assert excluded_and_used(ctx, container(used=GB), [])[0] == set()


def test_scheduled_space_counts_the_floor_and_committed_bytes() -> None:
    """ReplicationManagerUtil: remaining less freeSpaceToSpare (and committed bytes, the one usable-space
    rule) less the scheduled bytes; remaining alone would send a copy across the node's floor (issue 28 defect
    18)."""
    ctx = FakeContext()
    for i, (floor, committed) in enumerate(((20 * GB, 0), (0, 20 * GB), (0, 0)), start=1):
        info = ctx.nodes.add(dn(i), remaining=45 * GB)
        info.report = NodeReport(
            tuple(replace(s, free_space_to_spare=floor, committed=committed) for s in info.report.storage),
            info.report.metadata_storage,
        )
        deadline = ctx.clock.wall_ms() + 10**9
        ctx.pending_ops.schedule_add(7, dn(i), 0, None, deadline, 10 * GB)
        ctx.pending_ops.schedule_add(8, dn(i), 0, None, deadline, 10 * GB)
    # 45 - 20 - 20 = 5 GB < 2 x 5 GB for the first two; 45 - 20 = 25 GB fits the third
    assert excluded_and_used(ctx, container(used=5 * GB), [])[0] == {dn(1), dn(2)}


def test_ec_container_excluded_and_used_by_index_copies() -> None:
    ctx = FakeContext()
    for i in range(1, 4):
        ctx.nodes.add(dn(i))
    replicas = [replica(dn(1), index=1), replica(dn(2), "UNHEALTHY", index=2), replica(dn(3), index=3)]
    assert excluded_and_used(ctx, ec(), replicas) == ({dn(2)}, {dn(1), dn(3)})
