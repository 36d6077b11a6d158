"""The ops-per-node limit in the repair handlers: what a command charges, and which nodes a saturated
count keeps out as targets and as EC reconstruction sources."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.commands import CommandTargetOverloadedError
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.processing import handle_under_replicated
from tests.unit.scm.replication.processing.rmp_fakes import (
    FakeContext,
    Op,
    T,
    container,
    dn,
    ec,
    replica,
    under,
)

RS_6_3 = "RS-6-3"


def ctx_of(n: int, limit: int | None, racks: int | None = None) -> FakeContext:
    """n nodes (each on its own rack unless `racks`); the rule on with `limit`, off for None."""
    config = ReplicationManagerConfig(
        datanode_ops_limit_enabled=limit is not None, datanode_ops_limit=limit or 10
    )
    ctx = FakeContext(config=config)
    for i in range(1, n + 1):
        ctx.nodes.add(dn(i), f"/r{(i - 1) % (racks or n) + 1}")
    return ctx


def with_indexes(ctx: FakeContext, indexes: dict[int, int]) -> None:
    ctx.set_replicas(*(replica(dn(n), index=i) for n, i in indexes.items()))


def reconstruction_sources(ctx: FakeContext) -> list[tuple[str, int]]:
    [sent] = [s for s in ctx.sent if s.type is T.reconstructECContainersCommand]
    return [(s.datanode.uuid, s.replica_index) for s in sent.command.sources]


def test_off_every_available_index_is_a_source_and_nothing_is_counted() -> None:
    ctx = ctx_of(10, None)
    with_indexes(ctx, {i: i for i in range(1, 9)})  # RS-6-3, index 9 missing
    assert handle_under_replicated(under(ec(scheme=RS_6_3)), ctx) == 1
    assert reconstruction_sources(ctx) == [(dn(i), i) for i in range(1, 9)]
    assert all(ctx.sender.node_ops.count(dn(i)) == 0 for i in range(1, 11))


def test_on_a_reconstruction_names_data_sources_and_charges_each_source_and_target() -> None:
    ctx = ctx_of(10, 5)
    with_indexes(ctx, {i: i for i in range(1, 9)})
    assert handle_under_replicated(under(ec(scheme=RS_6_3)), ctx) == 1
    assert reconstruction_sources(ctx) == [(dn(i), i) for i in range(1, 7)]
    [sent] = ctx.sent
    [target] = [t.uuid for t in sent.command.targets]
    ops = ctx.sender.node_ops
    assert {i: ops.count(dn(i)) for i in range(1, 9)} == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 0, 8: 0}
    assert ops.count(target) == 1


def test_a_saturated_source_gives_way_to_another_index() -> None:
    ctx = ctx_of(10, 2)
    with_indexes(ctx, {i: i for i in range(1, 9)})
    ctx.sender.node_ops.charge([dn(2), dn(2), dn(4), dn(4)])
    assert handle_under_replicated(under(ec(scheme=RS_6_3)), ctx) == 1
    assert reconstruction_sources(ctx) == [(dn(i), i) for i in (1, 3, 5, 6, 7, 8)]


def test_a_saturated_source_gives_way_to_another_copy_of_its_index() -> None:
    ctx = ctx_of(11, 1)
    with_indexes(ctx, {i: i for i in range(1, 7)})  # 7, 8, 9 missing
    ctx.set_replicas(replica(dn(11), index=3))  # a second copy of index 3
    ctx.sender.node_ops.charge([dn(3)])
    handle_under_replicated(under(ec(scheme=RS_6_3)), ctx)
    assert reconstruction_sources(ctx) == [
        (dn(1), 1),
        (dn(2), 2),
        (dn(11), 3),
        (dn(4), 4),
        (dn(5), 5),
        (dn(6), 6),
    ]


def test_too_few_unsaturated_sources_defer_the_container_and_send_nothing() -> None:
    ctx = ctx_of(10, 1)
    with_indexes(ctx, {i: i for i in range(1, 8)})  # 7 available, 6 needed
    ctx.sender.node_ops.charge([dn(1), dn(2)])
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(ec(scheme=RS_6_3)), ctx)
    assert ctx.sent == []
    assert ctx.metrics.ec_reconstruction_cmds_deferred_total == 1


def test_a_saturated_node_is_not_chosen_as_a_target() -> None:
    ctx = ctx_of(11, 1)
    with_indexes(ctx, {i: i for i in range(1, 9)})  # 9 and 10 and 11 are candidates
    ctx.sender.node_ops.charge([dn(9), dn(10)])
    handle_under_replicated(under(ec(scheme=RS_6_3)), ctx)
    [sent] = ctx.sent
    assert [t.uuid for t in sent.command.targets] == [dn(11)]


def test_when_only_saturated_nodes_could_take_it_the_container_waits() -> None:
    ctx = ctx_of(9, 1)
    with_indexes(ctx, {i: i for i in range(1, 9)})  # dn(9) is the only candidate
    ctx.sender.node_ops.charge([dn(9)])
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(ec(scheme=RS_6_3)), ctx)
    assert ctx.sent == []


def test_a_target_the_limit_would_put_on_a_used_rack_waits() -> None:
    ctx = ctx_of(12, 1, racks=9)  # racks r1..r9; dn(10), dn(11), dn(12) share r1, r2, r3
    with_indexes(ctx, {i: i for i in range(1, 9)})  # r9 (dn(9)) is the only rack without a replica
    ctx.sender.node_ops.charge([dn(9)])
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(ec(scheme=RS_6_3)), ctx)
    assert ctx.sent == []


def test_a_replication_charges_its_source_and_target() -> None:
    ctx = ctx_of(4, 3, racks=2)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)))
    assert handle_under_replicated(under(container()), ctx) == 1
    [sent] = ctx.sent
    ops = ctx.sender.node_ops
    assert ops.count(sent.to) == 1
    assert ops.count(sent.command.target.uuid) == 1
    assert sum(ops.count(dn(i)) for i in range(1, 5)) == 2


def test_a_decommissioning_copy_is_still_its_index_source_when_saturated() -> None:
    """The rule keeps saturated nodes out as reconstruction sources, not as the one source of a copy."""
    ctx = ctx_of(7, 1)
    ctx.nodes.set_state(dn(2), op=Op.DECOMMISSIONING)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    ctx.sender.node_ops.charge([dn(2)])
    assert handle_under_replicated(under(ec()), ctx) == 1
    [sent] = ctx.sent
    assert (sent.to, sent.type, sent.command.replica_index) == (dn(2), T.replicateContainerCommand, 2)
